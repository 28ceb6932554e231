//! The accept loop: every connection is bounded in number, in how long it may take to send a
//! request's headers (and how long it may sit idle between requests), and in how long the
//! server waits for it at shutdown.
//!
//! `axum::serve` has none of these: 150 slow clients that never finish their headers stayed
//! open indefinitely, idle keep-alive connections could take every file descriptor, and
//! SIGTERM waited forever on one half-sent request. Here:
//!
//! - at most [`ServeOptions::max_connections`] connections are open; one more is answered with a
//!   JSON 503 and closed at once (an accept error such as EMFILE is retried after a pause, never
//!   spun on);
//! - hyper's header-read timer closes a connection that has not sent a whole request head within
//!   [`ServeOptions::header_timeout`]; the timer also runs while a kept-alive connection waits for
//!   its next request, so it is the idle timeout as well;
//! - a request's body and handler are bounded by the router's own request timeout
//!   ([`crate::REQUEST_TIMEOUT`]);
//! - on Ctrl-C or SIGTERM the listener closes, connections finish what they are answering, and
//!   after [`ServeOptions::shutdown_grace`] the rest are dropped.

use crate::AppState;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt as _;
use tokio::sync::Semaphore;

/// How [`serve_with`] bounds connections.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Most connections open at once.
    pub max_connections: usize,
    /// Longest a connection may take to send a request head, and longest it may stay idle.
    pub header_timeout: Duration,
    /// Longest the server waits for open connections at shutdown.
    pub shutdown_grace: Duration,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            // A classroom of browsers opens a handful of connections each; the default
            // descriptor limit (1024) keeps room for the simulations' own files.
            max_connections: 512,
            header_timeout: Duration::from_secs(10),
            shutdown_grace: Duration::from_secs(10),
        }
    }
}

/// Serves the lab on `listener` until Ctrl-C or SIGTERM, as the module doc describes.
pub async fn serve_with(
    listener: tokio::net::TcpListener,
    state: AppState,
    opts: ServeOptions,
) -> std::io::Result<()> {
    serve_until(listener, state, opts, crate::shutdown_signal()).await
}

/// [`serve_with`], stopping when `stop` completes (tests stop it themselves).
pub async fn serve_until(
    listener: tokio::net::TcpListener,
    state: AppState,
    opts: ServeOptions,
    stop: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    let router = crate::app(state);
    let slots = Arc::new(Semaphore::new(opts.max_connections));
    let graceful = GracefulShutdown::new();
    let mut stop = std::pin::pin!(stop);
    loop {
        tokio::select! {
            () = &mut stop => break,
            accepted = listener.accept() => {
                let (sock, peer) = match accepted {
                    Ok(x) => x,
                    Err(e) => {
                        // EMFILE and friends: the condition passes when connections close;
                        // spinning on it would only burn a core.
                        eprintln!("rdmalab serve: accept failed: {e}; retrying in 100 ms");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                let Ok(slot) = slots.clone().try_acquire_owned() else {
                    tokio::spawn(refuse(sock, peer, opts.max_connections));
                    continue;
                };
                let _ = sock.set_nodelay(true);
                let svc = TowerToHyperService::new(router.clone());
                let conn = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(opts.header_timeout)
                    .keep_alive(true)
                    .serve_connection(TokioIo::new(sock), svc);
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    let _slot = slot;
                    // A client that vanished or timed out is not the server's error.
                    let _ = conn.await;
                });
            }
        }
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(opts.shutdown_grace) => {
            eprintln!(
                "rdmalab serve: connections still open after {} s; closing them",
                opts.shutdown_grace.as_secs()
            );
        }
    }
    Ok(())
}

/// Answers a connection over the limit with a JSON 503 and closes it (bounded: a client that
/// does not read is dropped after a second).
async fn refuse(mut sock: tokio::net::TcpStream, peer: SocketAddr, limit: usize) {
    let body = format!(
        "{{\"error\":\"the server has {limit} connections open, its limit; try again in a second\"}}"
    );
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         retry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let write = async {
        sock.write_all(answer.as_bytes()).await?;
        sock.shutdown().await
    };
    if tokio::time::timeout(Duration::from_secs(1), write)
        .await
        .is_err()
    {
        eprintln!("rdmalab serve: {peer} over the connection limit did not take its 503");
    }
}
