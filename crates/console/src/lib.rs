//! The web console: static pages served at `/console/`, compiled into the
//! binary. The pages call the server's own API from the browser (signed
//! with SigV4 in the page when authentication is on), so this crate only
//! hands out the files of `assets/`, compiled in; the server routes
//! [`is_console_path`] requests to [`serve`], and the crate reads nothing
//! of the service.

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::Full;

/// The console's URL prefix.
pub const PREFIX: &str = "/console/";

/// The Content-Security-Policy of every console response: scripts, styles
/// and requests only from this server, no inline script, no framing.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; \
base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// One file of the console: its path under [`PREFIX`], content type and bytes.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

macro_rules! asset {
    ($path:literal, $type:expr) => {
        Asset {
            path: $path,
            content_type: $type,
            body: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/", $path)),
        }
    };
}

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const SVG: &str = "image/svg+xml";

/// Every file the console has; anything else under the prefix is a 404.
static ASSETS: &[Asset] = &[
    asset!("index.html", HTML),
    asset!("style.css", CSS),
    asset!("favicon.svg", SVG),
    asset!("app.js", JS),
    asset!("api.js", JS),
    asset!("sigv4.js", JS),
    asset!("ui.js", JS),
    asset!("doctor.js", JS),
    asset!("sparkline.js", JS),
    asset!("pages/queues.js", JS),
    asset!("pages/queue.js", JS),
    asset!("pages/queue-edit.js", JS),
    asset!("pages/messages.js", JS),
    asset!("pages/redrive.js", JS),
    asset!("pages/archive.js", JS),
    asset!("pages/tasks.js", JS),
    asset!("pages/alarms.js", JS),
    asset!("pages/topics.js", JS),
    asset!("pages/doctor.js", JS),
];

/// Whether `path` is the console's (`/console` or under `/console/`).
pub fn is_console_path(path: &str) -> bool {
    path == "/console" || path.starts_with(PREFIX)
}

/// Answers a GET of a console path: `/console` redirects to `/console/`,
/// `/console/` is the page, a known asset is served, anything else is 404.
pub fn serve(path: &str) -> Response<Full<Bytes>> {
    if path == "/console" {
        let mut resp = Response::new(Full::new(Bytes::new()));
        *resp.status_mut() = StatusCode::MOVED_PERMANENTLY;
        resp.headers_mut()
            .insert(header::LOCATION, HeaderValue::from_static(PREFIX));
        return resp;
    }
    let name = path.strip_prefix(PREFIX).unwrap_or("");
    let name = if name.is_empty() { "index.html" } else { name };
    match ASSETS.iter().find(|a| a.path == name) {
        Some(asset) => respond(StatusCode::OK, asset.content_type, asset.body),
        None => respond(
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            b"not found\n",
        ),
    }
}

fn respond(
    status: StatusCode,
    content_type: &'static str,
    body: &'static [u8],
) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(Bytes::from_static(body)));
    *resp.status_mut() = status;
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    // The assets change with the binary: revalidating is cheap, stale
    // scripts after an upgrade are not.
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_asset_has_a_unique_path() {
        let mut paths: Vec<_> = ASSETS.iter().map(|a| a.path).collect();
        paths.sort_unstable();
        paths.dedup();
        assert_eq!(paths.len(), ASSETS.len());
    }

    #[test]
    fn the_index_loads_only_module_scripts_of_its_own() {
        let index = std::str::from_utf8(ASSETS[0].body).unwrap_or("");
        assert!(index.contains(r#"<script type="module" src="app.js"></script>"#));
        assert!(!index.contains("http://") && !index.contains("https://"));
    }
}
