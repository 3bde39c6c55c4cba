//! A real local HTTP receiver for webhook tests: records every request and answers the
//! statuses it is told to (then 200).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};

#[derive(Clone, Debug)]
pub struct Received {
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Received {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap()
    }

    pub fn header(&self, name: &str) -> String {
        self.headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default()
    }
}

#[derive(Clone, Default)]
struct Inner {
    received: Arc<Mutex<Vec<Received>>>,
    script: Arc<Mutex<VecDeque<u16>>>,
}

pub struct Receiver {
    pub url: String,
    inner: Inner,
}

async fn receive(State(inner): State<Inner>, headers: HeaderMap, body: Bytes) -> StatusCode {
    inner
        .received
        .lock()
        .unwrap()
        .push(Received { headers, body });
    let status = inner.script.lock().unwrap().pop_front().unwrap_or(200);
    StatusCode::from_u16(status).unwrap()
}

impl Receiver {
    /// Answers `statuses` in order, then 200 forever.
    pub async fn start(statuses: &[u16]) -> Self {
        let inner = Inner::default();
        inner
            .script
            .lock()
            .unwrap()
            .extend(statuses.iter().copied());
        let router = axum::Router::new()
            .route("/hook", axum::routing::post(receive))
            .with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router).await });
        Self {
            url: format!("http://{addr}/hook"),
            inner,
        }
    }

    pub fn received(&self) -> Vec<Received> {
        self.inner.received.lock().unwrap().clone()
    }

    /// From now on answer `status` to every request.
    pub fn always(&self, status: u16) {
        let mut script = self.inner.script.lock().unwrap();
        script.clear();
        script.extend(std::iter::repeat_n(status, 1000));
    }

    pub fn recover(&self) {
        self.inner.script.lock().unwrap().clear();
    }
}
