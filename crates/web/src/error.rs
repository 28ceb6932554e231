//! API errors: a status and a JSON body that names the field at fault and what is allowed.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
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
            msg: None,
            at: None,
        }
    }
}
