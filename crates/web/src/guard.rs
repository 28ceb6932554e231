//! What every response passes through: the Host check, the request timeout, JSON bodies for
//! every API error, and the security headers.

use crate::AppState;
use crate::error::ApiError;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::IpAddr;

/// Which `Host` headers the server answers. A server on 127.0.0.1 that answered any Host could
/// be reached by a web page through DNS rebinding (a name that first resolves to the page's
/// server, then to 127.0.0.1); checking the Host closes that door.
#[derive(Clone, Debug, Default)]
pub enum HostPolicy {
    /// Any Host (the tests' router, and a server bound to the unspecified address 0.0.0.0,
    /// which cannot know the names it is reached by; `serve` warns about it).
    #[default]
    Any,
    /// These names or addresses only, on any port (`localhost`, `127.0.0.1`, `[::1]` for a
    /// loopback bind; the bound address and `--allow-host` names otherwise).
    Only(Vec<String>),
}

impl HostPolicy {
    /// The policy for a server bound to `ip`, with extra allowed names.
    pub fn for_bind(ip: IpAddr, extra: &[String]) -> HostPolicy {
        if ip.is_unspecified() {
            return HostPolicy::Any;
        }
        let mut names: Vec<String> = extra.iter().map(|n| n.to_ascii_lowercase()).collect();
        if ip.is_loopback() {
            names.extend(["localhost", "127.0.0.1", "[::1]"].map(String::from));
        } else {
            names.push(match ip {
                IpAddr::V4(v4) => v4.to_string(),
                IpAddr::V6(v6) => format!("[{v6}]"),
            });
        }
        HostPolicy::Only(names)
    }

    /// Whether a request with this `Host` header value is answered.
    pub fn allows(&self, host: Option<&str>) -> bool {
        let HostPolicy::Only(names) = self else {
            return true;
        };
        let Some(host) = host else {
            return false;
        };
        let host = host.trim().to_ascii_lowercase();
        // Strip the port: `name:port`, `[v6]:port`.
        let name = match host.rfind(':') {
            Some(i) if !host[i..].contains(']') => &host[..i],
            _ => host.as_str(),
        };
        names.iter().any(|n| n == name)
    }
}

/// Refuses requests whose Host the policy does not allow (421, JSON).
pub async fn check_host(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok());
    if !state.hosts.allows(host) {
        return ApiError::field(
            StatusCode::MISDIRECTED_REQUEST,
            "Host",
            format!(
                "this server does not answer to the host {:?}",
                host.unwrap_or("").chars().take(64).collect::<String>()
            ),
            "the address the lab was started on (rdmalab serve --allow-host NAME adds names)",
        )
        .into_response();
    }
    next.run(req).await
}

/// Answers 408 (JSON) when a request's body and handler take longer than
/// [`crate::REQUEST_TIMEOUT`].
pub async fn timeout(req: Request, next: Next) -> Response {
    match tokio::time::timeout(crate::REQUEST_TIMEOUT, next.run(req)).await {
        Ok(r) => r,
        Err(_) => ApiError::said(
            StatusCode::REQUEST_TIMEOUT,
            rdmalab::session::msg::Msg::new(rdmalab::session::msg::MsgId::ServerRequestTimeout)
                .arg("secs", crate::REQUEST_TIMEOUT.as_secs()),
        )
        .into_response(),
    }
}

/// Gives every error answer of `/api/` a JSON body `{"error": ...}`: axum's own rejections
/// (405 method not allowed, 413 body too large) answer plain text or nothing.
pub async fn json_errors(req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    let api = path.starts_with("/api/");
    let r = next.run(req).await;
    let status = r.status();
    let is_json = r
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !api || !(status.is_client_error() || status.is_server_error()) || is_json {
        return r;
    }
    let (parts, body) = r.into_parts();
    // The original text, if it had one, becomes the message (bounded: these are short).
    let text = axum::body::to_bytes(body, 4096)
        .await
        .ok()
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| {
            status
                .canonical_reason()
                .unwrap_or("request failed")
                .to_lowercase()
        });
    let mut e = ApiError::new(status, text);
    if status == StatusCode::METHOD_NOT_ALLOWED {
        // axum sends no `Allow`; the API's paths each take one method.
        let posts = ["/api/run", "/api/verbs"];
        let post = posts.contains(&path.as_str()) || path.starts_with("/api/lab/");
        e.allowed = Some(if post { "POST" } else { "GET" }.to_string());
    }
    let mut out = e.into_response();
    for (k, v) in parts.headers.iter() {
        if k != header::CONTENT_TYPE && k != header::CONTENT_LENGTH {
            out.headers_mut().insert(k.clone(), v.clone());
        }
    }
    out
}

/// The Content-Security-Policy of every page: scripts, styles, fonts and API calls from this
/// server only; inline `style` attributes allowed (the drawings set them); no plugins, no
/// framing, no `<base>` tricks.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
     img-src 'self' data: blob:; font-src 'self'; connect-src 'self'; object-src 'none'; \
     base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// Adds the security headers to every response.
pub async fn security_headers(req: Request<Body>, next: Next) -> Response {
    let mut r = next.run(req).await;
    let h = r.headers_mut();
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        header::HeaderName::from_static("cross-origin-opener-policy"),
        HeaderValue::from_static("same-origin"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_for_a_loopback_bind() {
        let p = HostPolicy::for_bind(IpAddr::from([127, 0, 0, 1]), &[]);
        for ok in [
            "localhost:7878",
            "127.0.0.1:7878",
            "[::1]:7878",
            "LOCALHOST",
            "127.0.0.1",
        ] {
            assert!(p.allows(Some(ok)), "{ok}");
        }
        for bad in [
            "evil.example:7878",
            "127.0.0.2",
            "localhost.evil.example",
            "",
        ] {
            assert!(!p.allows(Some(bad)), "{bad}");
        }
        assert!(!p.allows(None));
    }

    #[test]
    fn hosts_for_other_binds() {
        let p = HostPolicy::for_bind(IpAddr::from([10, 1, 2, 3]), &["lab.school".into()]);
        assert!(p.allows(Some("10.1.2.3:7878")) && p.allows(Some("lab.school:80")));
        assert!(!p.allows(Some("localhost:7878")));
        assert!(HostPolicy::for_bind(IpAddr::from([0, 0, 0, 0]), &[]).allows(Some("any")));
        let v6 = HostPolicy::for_bind("fd00::1".parse().unwrap(), &[]);
        assert!(v6.allows(Some("[fd00::1]:7878")));
    }
}
