//! The web console (rule X6): `/console/` and every file it loads are
//! served from the binary with their content types and a strict
//! Content-Security-Policy; unknown files are 404.

use crate::common::{RawClient, RawResponse, TestServer};

const CSP_PARTS: [&str; 4] = [
    "default-src 'self'",
    "script-src 'self'",
    "object-src 'none'",
    "frame-ancestors 'none'",
];

fn get(raw: &RawClient, path: &str) -> RawResponse {
    raw.request("GET", path, &[], b"")
}

fn assert_console_file(resp: &RawResponse, path: &str, content_type: &str) {
    assert_eq!(resp.status, 200, "{path}: {}", resp.body);
    assert_eq!(resp.header("content-type"), Some(content_type), "{path}");
    let csp = resp
        .header("content-security-policy")
        .unwrap_or_else(|| panic!("{path} has no Content-Security-Policy"));
    for part in CSP_PARTS {
        assert!(csp.contains(part), "{path}: {part} missing from {csp}");
    }
    assert!(!csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"));
    assert_eq!(resp.header("x-content-type-options"), Some("nosniff"));
}

/// The relative module paths a script imports (`from './x.js'`).
fn imports(script: &str) -> Vec<String> {
    script
        .lines()
        .filter_map(|l| l.split(" from '").nth(1))
        .filter_map(|rest| rest.split('\'').next())
        .map(str::to_string)
        .collect()
}

/// `base`'s directory joined with a relative `./` or `../` path.
fn resolve(base: &str, relative: &str) -> String {
    let mut parts: Vec<&str> = base.split('/').collect();
    parts.pop();
    for seg in relative.split('/') {
        match seg {
            "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    parts.join("/")
}

/// X6: the page, its stylesheet, icon and every module it imports
/// (followed from `app.js`) are served with their types and the CSP; the
/// page runs no inline script and names no other origin.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x6_console_files_are_served_with_their_types_and_csp() {
    let server = TestServer::start().await;
    let raw = server.raw();
    tokio::task::spawn_blocking(move || {
        let index = get(&raw, "/console/");
        assert_console_file(&index, "/console/", "text/html; charset=utf-8");
        assert!(
            index
                .body
                .contains(r#"<script type="module" src="app.js"></script>"#)
        );
        let inline_handler = index.body.split(" on").skip(1).any(|rest| {
            let name: String = rest.chars().take_while(char::is_ascii_lowercase).collect();
            !name.is_empty() && rest[name.len()..].starts_with('=')
        });
        assert!(
            !index.body.contains("<script>") && !inline_handler,
            "no inline script or handler: {}",
            index.body
        );
        for (path, content_type) in [
            ("/console/index.html", "text/html; charset=utf-8"),
            ("/console/style.css", "text/css; charset=utf-8"),
            ("/console/favicon.svg", "image/svg+xml"),
        ] {
            assert_console_file(&get(&raw, path), path, content_type);
        }
        let mut todo = vec!["/console/app.js".to_string()];
        let mut seen = Vec::new();
        while let Some(path) = todo.pop() {
            if seen.contains(&path) {
                continue;
            }
            let script = get(&raw, &path);
            assert_console_file(&script, &path, "text/javascript; charset=utf-8");
            // The SVG namespace is a name, not a place anything is fetched from.
            let body = script.body.replace("'http://www.w3.org/2000/svg'", "");
            assert!(
                !body.contains("http://") && !body.contains("https://"),
                "{path} names another origin"
            );
            todo.extend(imports(&script.body).iter().map(|m| resolve(&path, m)));
            seen.push(path);
        }
        for page in [
            "queues",
            "queue",
            "queue-edit",
            "messages",
            "redrive",
            "tasks",
            "alarms",
            "doctor",
        ] {
            assert!(
                seen.contains(&format!("/console/pages/{page}.js")),
                "{page} not reached from app.js: {seen:?}"
            );
        }
        for module in ["sigv4", "doctor", "sparkline"] {
            assert!(
                seen.contains(&format!("/console/{module}.js")),
                "{module}.js not reached"
            );
        }
    })
    .await
    .unwrap();
}

/// X6: `/console` redirects to `/console/`; an unknown file is 404, and a
/// path that only starts like the console is not the console's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x6_console_redirects_and_refuses_unknown_files() {
    let server = TestServer::start().await;
    let raw = server.raw();
    tokio::task::spawn_blocking(move || {
        let redirect = get(&raw, "/console");
        assert_eq!(redirect.status, 301);
        assert_eq!(redirect.header("location"), Some("/console/"));
        for path in [
            "/console/nope.js",
            "/console/pages/",
            "/console/../Cargo.toml",
            "/console/app.js/",
        ] {
            let resp = get(&raw, path);
            assert_eq!(resp.status, 404, "{path}: {}", resp.body);
            assert!(resp.header("content-security-policy").is_some());
        }
        // Not the console: answered as an SQS request (no action).
        let other = get(&raw, "/consoles");
        assert_ne!(other.status, 200);
        assert!(other.header("content-security-policy").is_none());
    })
    .await
    .unwrap();
}
