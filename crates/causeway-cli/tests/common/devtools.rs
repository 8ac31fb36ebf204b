//! A minimal Chrome DevTools protocol client over the system's Chromium (Debian's
//! `chromium` package, installed by scripts/setup.sh): start it headless, load a page,
//! collect console errors and exceptions, evaluate expressions, take a screenshot.
//! Nothing downloads a browser.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tungstenite::{Message, WebSocket, stream::MaybeTlsStream};

/// A headless Chromium with one page attached.
pub struct Browser {
    child: Child,
    ws: WebSocket<MaybeTlsStream<TcpStream>>,
    next_id: u64,
    /// Console errors, uncaught exceptions and error log entries seen so far.
    pub errors: Vec<String>,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Start Chromium (`None` if it is not installed).
    pub fn start() -> Option<Browser> {
        let exe = ["chromium", "chromium-browser"].into_iter().find(|e| {
            Command::new(e)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })?;
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new(exe)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--remote-debugging-port=0",
                "--window-size=1280,2400",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("start chromium");
        // Chromium prints `DevTools listening on ws://127.0.0.1:PORT/...`.
        let mut port = None;
        let stderr = child.stderr.take().unwrap();
        for line in BufReader::new(stderr).lines() {
            let line = line.unwrap_or_default();
            if let Some(rest) = line.split("ws://127.0.0.1:").nth(1) {
                port = rest.split('/').next().and_then(|p| p.parse::<u16>().ok());
                break;
            }
        }
        let port = port.expect("chromium's DevTools port");
        let list = http_get(port, "/json/list");
        let pages: Value = serde_json::from_str(&list).unwrap();
        let url = pages
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["type"] == "page")
            .and_then(|p| p["webSocketDebuggerUrl"].as_str())
            .expect("a page target")
            .to_string();
        let (ws, _) = tungstenite::connect(url.as_str()).expect("attach to the page");
        let mut b = Browser {
            child,
            ws,
            next_id: 0,
            errors: Vec::new(),
            _profile: profile,
        };
        b.call("Runtime.enable", json!({}));
        b.call("Log.enable", json!({}));
        b.call("Page.enable", json!({}));
        Some(b)
    }

    /// Send a command and wait for its result, recording errors that arrive meanwhile.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let msg = json!({"id": id, "method": method, "params": params}).to_string();
        self.ws.send(Message::text(msg)).unwrap();
        loop {
            let v = self.read();
            if v["id"].as_u64() == Some(id) {
                assert!(v.get("error").is_none(), "{method} failed: {v}");
                return v["result"].clone();
            }
        }
    }

    fn read(&mut self) -> Value {
        loop {
            if let Message::Text(t) = self.ws.read().expect("devtools message") {
                let v: Value = serde_json::from_str(t.as_str()).unwrap();
                self.note(&v);
                return v;
            }
        }
    }

    fn note(&mut self, v: &Value) {
        match v["method"].as_str() {
            Some("Runtime.exceptionThrown") => self.errors.push(v["params"].to_string()),
            Some("Runtime.consoleAPICalled") if v["params"]["type"] == "error" => {
                self.errors.push(v["params"].to_string())
            }
            Some("Log.entryAdded") if v["params"]["entry"]["level"] == "error" => {
                self.errors.push(v["params"].to_string())
            }
            _ => {}
        }
    }

    /// Load a URL and wait for its load event.
    pub fn navigate(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url}));
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if self.read()["method"] == "Page.loadEventFired" {
                return;
            }
        }
        panic!("{url} did not load");
    }

    /// Evaluate a JavaScript expression in the page; its value.
    pub fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true}),
        );
        assert!(r.get("exceptionDetails").is_none(), "{expr}: {r}");
        r["result"]["value"].clone()
    }

    /// A PNG screenshot of the whole page.
    pub fn screenshot(&mut self) -> Vec<u8> {
        use base64::Engine as _;
        let r = self.call(
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true}),
        );
        base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().unwrap())
            .unwrap()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http_get(port: u16, path: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    // Read the headers, then exactly Content-Length bytes of body.
    let mut r = BufReader::new(s);
    let mut len = 0usize;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).unwrap();
    String::from_utf8_lossy(&body).into_owned()
}
