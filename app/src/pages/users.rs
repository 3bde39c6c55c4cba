//! Users (company ADMIN): the company's console users, new users, and the API_PLUGINS
//! permission that opens the API/Plugins section.

use std::sync::Arc;

use leptos::prelude::*;

use super::{Problem, Signed, failure};
use crate::api::{CreateUser, SetApiPlugins, list_users};
use crate::backend::ConsoleUser;
use crate::i18n::t;

#[component]
pub fn Users() -> impl IntoView {
    view! { <Signed body=Arc::new(|user| view! { <UserList user/> }.into_any())/> }
}

#[component]
fn UserList(user: ConsoleUser) -> impl IntoView {
    if !user.is_admin() {
        return view! {
            <section class="card"><p role="alert" class="error">{t(
                "Só o administrador da empresa gerencia usuários.",
                "Only the company's admin manages users.",
            )}</p></section>
        }
        .into_any();
    }
    let create = ServerAction::<CreateUser>::new();
    let grant = ServerAction::<SetApiPlugins>::new();
    let data = Resource::new(
        move || (create.version().get(), grant.version().get()),
        |_| list_users(),
    );
    let me = user.id.clone();
    view! {
        <section class="card">
            <h1>{t("Usuários", "Users")}</h1>
            {move || failure(grant.value())().map(|e| view! { <Problem error=e/> })}
            <Transition fallback=|| view! { <p>{t("Carregando…", "Loading…")}</p> }>
                {move || {
                    let me = me.clone();
                    Suspend::new(async move {
                        match data.await {
                            Err(e) => view! { <Problem error=e/> }.into_any(),
                            Ok(users) => view! {
                                <table>
                                    <thead><tr>
                                        <th scope="col">"Email"</th>
                                        <th scope="col">{t("Perfil", "Role")}</th>
                                        <th scope="col">"API_PLUGINS"</th>
                                        <th scope="col"></th>
                                    </tr></thead>
                                    <tbody>
                                        {users.into_iter().map(|u| {
                                            let yourself = u.id == me;
                                            view! {
                                                <tr data-user=u.email.clone()>
                                                    <td>{u.email.clone()}</td>
                                                    <td>{u.role.clone()}</td>
                                                    <td>{if u.api_plugins { t("sim", "yes") } else { t("não", "no") }}</td>
                                                    <td>
                                                        <ActionForm action=grant>
                                                            <input type="hidden" name="user" value=u.id.clone()/>
                                                            <input type="hidden" name="granted" value=(!u.api_plugins).to_string()/>
                                                            <button type="submit" class="secondary" prop:disabled=yourself>
                                                                {if u.api_plugins { t("Revogar API_PLUGINS", "Revoke API_PLUGINS") } else { t("Conceder API_PLUGINS", "Grant API_PLUGINS") }}
                                                            </button>
                                                        </ActionForm>
                                                    </td>
                                                </tr>
                                            }
                                        }).collect_view()}
                                    </tbody>
                                </table>
                            }.into_any(),
                        }
                    })
                }}
            </Transition>
            <h2>{t("Novo usuário", "New user")}</h2>
            <ActionForm action=create>
                <label for="user-email">"Email"</label>
                <input id="user-email" name="email" type="email" required/>
                <label for="user-password">{t("Senha inicial (8+ caracteres)", "Initial password (8+ characters)")}</label>
                <input id="user-password" name="password" type="password" required minlength="8" autocomplete="new-password"/>
                <label for="user-role">{t("Perfil", "Role")}</label>
                <select id="user-role" name="role">
                    <option value="MEMBER">{t("MEMBER (membro)", "MEMBER")}</option>
                    <option value="ADMIN">{t("ADMIN (administrador)", "ADMIN")}</option>
                </select>
                <label class="inline"><input type="checkbox" name="api_plugins" value="on"/> " API_PLUGINS"</label>
                <button type="submit">{t("Criar usuário", "Create user")}</button>
            </ActionForm>
            {move || failure(create.value())().map(|e| view! { <Problem error=e/> })}
            {move || create.value().get().and_then(|r| r.ok()).map(|u| view! {
                <p role="status" class="ok">{format!("{} {}", t("Usuário criado:", "User created:"), u.email)}</p>
            })}
        </section>
    }
    .into_any()
}
