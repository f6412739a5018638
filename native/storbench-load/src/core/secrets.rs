//! Secrets storbench hands over (S3 keys, a CQL password): a JSON object `{"NAME": "value"}` in the private
//! 0600 file that `$STORBENCH_SECRETS_FILE` names, so that no secret is in the engine's command line or its
//! environment (`/proc/PID/environ`); else the environment variable `NAME` itself (the engine run by hand).

use std::collections::HashMap;
use std::sync::OnceLock;

pub const FILE_ENV: &str = "STORBENCH_SECRETS_FILE";

fn from_file() -> &'static HashMap<String, String> {
    static SECRETS: OnceLock<HashMap<String, String>> = OnceLock::new();
    SECRETS.get_or_init(|| {
        std::env::var_os(FILE_ENV)
            .and_then(|path| std::fs::read(path).ok())
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    })
}

/// The secret `name`: from the secrets file, else from the environment.
pub fn var(name: &str) -> Option<String> {
    from_file().get(name).cloned().or_else(|| std::env::var(name).ok())
}
