use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = cofre_server::cli::Cli::parse();
    match cofre_server::cli::run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
