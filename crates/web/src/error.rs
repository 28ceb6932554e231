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
}

impl ApiError {
    /// An error with no field.
    pub fn new(status: StatusCode, error: impl Into<String>) -> ApiError {
        ApiError {
            status,
            error: error.into(),
            field: None,
            allowed: None,
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
        }
    }

    /// 404 for a thing that does not exist.
    pub fn not_found(what: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, what)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(&self)).into_response()
    }
}

impl From<scenario::ScenarioError> for ApiError {
    fn from(e: scenario::ScenarioError) -> ApiError {
        ApiError {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            field: (!e.key.is_empty()).then(|| e.key.clone()),
            allowed: (!e.allowed.is_empty()).then(|| e.allowed.clone()),
            error: e.to_string(),
        }
    }
}
