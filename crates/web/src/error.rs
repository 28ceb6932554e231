//! API errors: a status and a JSON body that names the field at fault and what is allowed.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use rdmalab::session::msg::{Msg, MsgId};
use serde::Serialize;

/// An error answer: `{"error": ..., "field": ..., "allowed": ...}` with its status.
#[derive(Debug, Serialize)]
pub struct ApiError {
    /// HTTP status (400, 404, 413, 422, 500, 503).
    #[serde(skip)]
    pub status: StatusCode,
    /// What went wrong, in a sentence.
    pub error: String,
    /// The request field (or scenario key) at fault, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// What that field allows, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed: Option<String>,
    /// A 500's report, for the user to file: the scenario that failed and what broke.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<Box<serde_json::Value>>,
    /// Seconds after which a retry may succeed (sent as `Retry-After` with 503).
    #[serde(skip)]
    pub retry_after: Option<u32>,
    /// `error` as a message id and its arguments (a refused verbs session), so the page
    /// writes it in its own language (`rdmalab::session::msg`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub msg: Option<Box<rdmalab::session::msg::Msg>>,
    /// The 1-based line and column the message is about (a refused verbs session).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<[u32; 2]>,
    /// `allowed` as a message id and its arguments, when it is words rather than a range or a
    /// list of names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_msg: Option<Box<rdmalab::session::msg::Msg>>,
}

impl ApiError {
    /// An error with no field.
    pub fn new(status: StatusCode, error: impl Into<String>) -> ApiError {
        ApiError {
            status,
            error: error.into(),
            field: None,
            allowed: None,
            report: None,
            retry_after: None,
            msg: None,
            at: None,
            allowed_msg: None,
        }
    }

    /// An error about `field`, which allows `allowed`.
    pub fn field(
        status: StatusCode,
        field: impl Into<String>,
        error: impl Into<String>,
        allowed: impl Into<String>,
    ) -> ApiError {
        ApiError {
            status,
            error: error.into(),
            field: Some(field.into()),
            allowed: Some(allowed.into()),
            report: None,
            retry_after: None,
            msg: None,
            at: None,
            allowed_msg: None,
        }
    }

    /// The error whose English `error` is `m`'s text, with `m` for the page to translate.
    pub fn said(status: StatusCode, m: rdmalab::session::msg::Msg) -> ApiError {
        ApiError {
            msg: Some(Box::new(m.clone())),
            ..ApiError::new(status, m.text())
        }
    }

    /// An error about `field` whose sentence and allowance are messages (`error` and `allowed`
    /// their English).
    pub fn field_said(
        status: StatusCode,
        field: impl Into<String>,
        m: rdmalab::session::msg::Msg,
        allowed: rdmalab::session::msg::Msg,
    ) -> ApiError {
        ApiError {
            msg: Some(Box::new(m.clone())),
            allowed_msg: Some(Box::new(allowed.clone())),
            ..ApiError::field(status, field, m.text(), allowed.text())
        }
    }

    /// 404 for a thing that does not exist.
    pub fn not_found(what: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, what)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r = (self.status, Json(&self)).into_response();
        if let Some(s) = self.retry_after
            && let Ok(v) = axum::http::HeaderValue::from_str(&s.to_string())
        {
            r.headers_mut().insert(axum::http::header::RETRY_AFTER, v);
        }
        r
    }
}

impl From<scenario::ScenarioError> for ApiError {
    fn from(e: scenario::ScenarioError) -> ApiError {
        ApiError {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            field: (!e.key.is_empty()).then(|| e.key.clone()),
            allowed: (!e.allowed.is_empty()).then(|| e.allowed.clone()),
            error: e.to_string(),
            report: None,
            retry_after: None,
            msg: scenario_msg(&e).map(Box::new),
            at: None,
            allowed_msg: e
                .why
                .as_deref()
                .and_then(rdmalab::session::msg::from_why)
                .map(Box::new),
        }
    }
}

/// A scenario error's sentence as a message id (its position and `--set` origin are the
/// `error` text's prefix, and `field` names the key). `allowed` is a range, a list of names or
/// keys, shown as it is, or for keys that clash or cannot apply the rule's message
/// (`scenario.*`, also sent as `allowed_msg`); a syntax error's cause is words (`toml.*`).
fn scenario_msg(e: &scenario::ScenarioError) -> Option<Msg> {
    use scenario::ErrorKind as K;
    let id = match e.kind {
        K::Syntax => {
            return Some(
                Msg::new(MsgId::ServerScenarioSyntax)
                    .arg("why", rdmalab::session::syntax::toml_syntax(&e.allowed)),
            );
        }
        K::UnknownKey => {
            return Some(
                Msg::new(MsgId::ServerScenarioUnknownKey)
                    .arg("key", e.key.as_str())
                    .arg("allowed", e.allowed.as_str()),
            );
        }
        K::WrongType => MsgId::ServerScenarioWrongType,
        K::OutOfRange => MsgId::ServerScenarioOutOfRange,
        // Keys that clash: the reason is the rule's message.
        K::Conflict => MsgId::ServerScenarioConflict,
        K::Inapplicable => MsgId::ServerScenarioCannotApply,
        K::BadEnum => MsgId::ServerScenarioBadEnum,
    };
    let allowed: rdmalab::session::msg::Arg =
        match e.why.as_deref().and_then(rdmalab::session::msg::from_why) {
            Some(why) => why.into(),
            None => e.allowed.as_str().into(),
        };
    Some(
        Msg::new(id)
            .arg("key", e.key.as_str())
            .arg("value", e.value.as_str())
            .arg("allowed", allowed),
    )
}

#[cfg(test)]
mod tests {
    use rdmalab::session::msg::MsgId;

    /// Every `server.*` message id is one this crate sends (the session's ids are checked
    /// in rdmalab's own msg.rs).
    #[test]
    fn every_server_id_is_sent() {
        let src = [
            include_str!("api.rs"),
            include_str!("guard.rs"),
            include_str!("error.rs"),
        ]
        .concat();
        for id in MsgId::ALL.iter().filter(|m| m.id().starts_with("server.")) {
            let name = format!("MsgId::{id:?}");
            assert!(src.contains(&name), "{} ({name}) is never sent", id.id());
        }
    }
}
