//! The HTML report in a real browser: Debian's chromium, driven through chromedriver
//! (WebDriver over HTTP, spoken here in a few lines rather than through a client
//! crate and its async runtime). The operational preset's report, opened from a
//! file, must log nothing to the console, request nothing, draw its gate bars and
//! latency curve, filter its item table as one types, and fit a phone's width (tables
//! scroll inside their boxes, not the page). Screenshots go to target/browser/.
//!
//! Skipped, with the reason printed, when /usr/bin/chromium or /usr/bin/chromedriver
//! is missing, unless EVALSPEC_REQUIRE_BROWSER is set (.ci/run sets it once it has
//! installed them): then a missing browser fails the test.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{evalspec, repo_root};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// chromedriver, stopped when dropped.
struct Driver {
    child: Child,
    port: u16,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Driver {
    fn start() -> Driver {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let driver = Driver { child, port };
        let start = Instant::now();
        while driver.call("GET", "/status", None).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "chromedriver did not answer"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        driver
    }

    /// One WebDriver command; the response's `value`, or its error.
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, String> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).map_err(|e| e.to_string())?;
        stream
            .set_read_timeout(Some(Duration::from_secs(120)))
            .unwrap();
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.port,
            body.len()
        );
        stream
            .write_all(request.as_bytes())
            .map_err(|e| e.to_string())?;
        // chromedriver keeps the connection open: read the header, then the body
        // by its length (or its chunks).
        let mut response = Vec::new();
        let mut buffer = [0u8; 65536];
        let split = loop {
            if let Some(split) = response.windows(4).position(|w| w == b"\r\n\r\n") {
                break split;
            }
            let n = stream.read(&mut buffer).map_err(|e| e.to_string())?;
            if n == 0 {
                return Err("the connection closed before the header ended".into());
            }
            response.extend_from_slice(&buffer[..n]);
        };
        let head = String::from_utf8_lossy(&response[..split]).to_lowercase();
        let mut body = response[split + 4..].to_vec();
        let length = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|n| n.trim().parse::<usize>().ok());
        let chunked = head.contains("transfer-encoding: chunked");
        loop {
            let complete = match length {
                Some(length) => body.len() >= length,
                None if chunked => body.windows(5).any(|w| w == b"0\r\n\r\n"),
                None => false,
            };
            if complete {
                break;
            }
            let n = stream.read(&mut buffer).map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&buffer[..n]);
        }
        if chunked {
            body = unchunk(&body);
        }
        let value: Value = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
        let value = value["value"].clone();
        match value.get("error") {
            Some(error) => Err(format!("{error}: {}", value["message"])),
            None => Ok(value),
        }
    }
}

fn unchunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(end) = body.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size =
            usize::from_str_radix(String::from_utf8_lossy(&body[..end]).trim(), 16).unwrap_or(0);
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&body[end + 2..end + 2 + size]);
        body = &body[end + 2 + size + 2..];
    }
}

/// A browser session on one page.
struct Session<'d> {
    driver: &'d Driver,
    id: String,
    _profile: tempfile::TempDir,
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        let _ = self
            .driver
            .call("DELETE", &format!("/session/{}", self.id), None);
    }
}

impl<'d> Session<'d> {
    fn new(driver: &'d Driver, width: u64, height: u64) -> Session<'d> {
        // A fresh profile, and nothing that reaches for the network on its own.
        let profile = tempfile::tempdir().unwrap();
        let args = [
            "--headless".to_string(),
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-quic".into(),
            "--no-first-run".into(),
            "--disable-background-networking".into(),
            "--disable-component-update".into(),
            "--disable-sync".into(),
            "--hide-scrollbars".into(),
            format!("--window-size={width},{height}"),
            format!("--user-data-dir={}", profile.path().display()),
        ];
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": args},
            "goog:loggingPrefs": {"browser": "ALL", "performance": "ALL"},
        }}});
        let session = driver
            .call("POST", "/session", Some(capabilities))
            .expect("a chromium session starts");
        Session {
            driver,
            id: session["sessionId"].as_str().unwrap().to_string(),
            _profile: profile,
        }
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let path = format!("/session/{}{path}", self.id);
        self.driver
            .call(method, &path, body)
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"))
    }

    fn open(&self, file: &Path) {
        let url = format!("file://{}", file.display());
        self.call("POST", "/url", Some(json!({ "url": url })));
    }

    fn script(&self, script: &str) -> Value {
        self.call(
            "POST",
            "/execute/sync",
            Some(json!({"script": script, "args": []})),
        )
    }

    /// Log entries of a kind (`browser`: the console; `performance`: DevTools events).
    fn log(&self, kind: &str) -> Vec<Value> {
        let entries = self.call("POST", "/se/log", Some(json!({ "type": kind })));
        entries.as_array().cloned().unwrap_or_default()
    }

    fn element(&self, css: &str) -> String {
        let found = self.call(
            "POST",
            "/element",
            Some(json!({"using": "css selector", "value": css})),
        );
        found
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap()
            .to_string()
    }

    fn type_into(&self, element: &str, text: &str) {
        self.call(
            "POST",
            &format!("/element/{element}/value"),
            Some(json!({ "text": text })),
        );
    }

    /// Emulates a screen `width` CSS pixels wide (a window cannot be narrower than
    /// 500 pixels), as a phone does: through the DevTools protocol.
    fn viewport(&self, width: u64, height: u64, mobile: bool) {
        let metrics =
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile});
        self.call(
            "POST",
            "/goog/cdp/execute",
            Some(json!({"cmd": "Emulation.setDeviceMetricsOverride", "params": metrics})),
        );
    }

    /// The whole page as a PNG: the viewport is made as tall as the page first.
    fn screenshot(&self, width: u64, mobile: bool, file: &Path) {
        let height = self
            .script("return document.documentElement.scrollHeight")
            .as_u64()
            .unwrap();
        self.viewport(width, height.min(16_000), mobile);
        let png = self.call("GET", "/screenshot", None);
        let png = base64_decode(png.as_str().unwrap());
        assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
        std::fs::write(file, png).unwrap();
    }
}

fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => 0,
    };
    let bytes: Vec<u8> = text
        .bytes()
        .filter(|c| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/')
        .collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, c)| n | u32::from(value(*c)) << (18 - 6 * i));
        out.extend(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

/// Why the browser test cannot run here, if it cannot.
fn missing_browser() -> Option<String> {
    let missing: Vec<&str> = [CHROMIUM, CHROMEDRIVER]
        .into_iter()
        .filter(|p| !Path::new(p).exists())
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "{} not installed (apt-get install chromium chromium-driver)",
            missing.join(" and ")
        )
    })
}

/// The operational preset's HTML report, written under target/browser.
fn report() -> (PathBuf, usize) {
    let dir = repo_root().join("target/browser/operational");
    let _ = std::fs::remove_dir_all(&dir);
    let out = evalspec(
        &repo_root(),
        &[
            "run",
            "specs/operational.yaml",
            "--out",
            dir.to_str().unwrap(),
            "--quiet",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let items = std::fs::read_to_string(dir.join("items.jsonl"))
        .unwrap()
        .lines()
        .count();
    (dir.join("report.html"), items)
}

#[test]
fn the_html_report_works_in_a_real_browser() {
    if let Some(reason) = missing_browser() {
        assert!(
            std::env::var_os("EVALSPEC_REQUIRE_BROWSER").is_none(),
            "EVALSPEC_REQUIRE_BROWSER is set, but {reason}"
        );
        println!("skipped: {reason}");
        return;
    }
    let (page, items) = report();
    let shots = repo_root().join("target/browser");
    let driver = Driver::start();

    let desktop = Session::new(&driver, 1280, 900);
    // Reading a log empties it: what the new-tab page did is not the report's.
    desktop.log("performance");
    desktop.open(&page);
    // Gate bars: one per gate with a numeric value and threshold, drawn with a width.
    let bars = desktop.script(
        "return Array.from(document.querySelectorAll('svg rect.bar')).map(r => r.getBoundingClientRect().width)",
    );
    let bars = bars.as_array().unwrap();
    assert_eq!(bars.len(), 3, "{bars:?}");
    assert!(bars.iter().all(|w| w.as_f64().unwrap() > 10.0), "{bars:?}");
    let limits = desktop.script("return document.querySelectorAll('svg line.limit').length");
    assert_eq!(limits, 3);
    // The latency curve: a line per accuracy metric, a point per run, on screen.
    let curve = desktop.script(
        "var svg = document.querySelector('svg.curve'); var box = svg.getBoundingClientRect();
         return {lines: Array.from(svg.querySelectorAll('polyline')).map(p => p.points.length),
                 fills: Array.from(svg.querySelectorAll('polyline')).map(p => getComputedStyle(p).fill),
                 points: svg.querySelectorAll('circle').length, width: box.width, height: box.height}",
    );
    assert_eq!(curve["lines"], json!([3, 3]), "{curve}");
    assert_eq!(
        curve["fills"],
        json!(["none", "none"]),
        "lines, not areas: {curve}"
    );
    assert_eq!(curve["points"], 6, "{curve}");
    assert!(curve["width"].as_f64().unwrap() > 400.0, "{curve}");

    // The filter box filters the item table as one types.
    let visible = "return Array.from(document.querySelectorAll('#items tbody tr'))
        .filter(r => r.offsetParent !== null).map(r => r.cells[0].textContent + ' ' + r.cells[3].textContent)";
    assert_eq!(desktop.script(visible).as_array().unwrap().len(), items);
    let filter = desktop.element("#filter");
    desktop.type_into(&filter, "q03");
    let rows = desktop.script(visible);
    let rows: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(
        rows,
        ["Q03 OK", "Q03 OVER_REFUSAL", "Q03 OK"],
        "one row per run"
    );
    assert_eq!(
        desktop.script("return document.getElementById('shown').textContent"),
        format!("3 of {items} items")
    );
    desktop.type_into(&filter, " no such item");
    assert_eq!(desktop.script(visible), json!([]));
    desktop.call("POST", &format!("/element/{filter}/clear"), Some(json!({})));
    desktop.type_into(&filter, "over_refusal");
    assert_eq!(desktop.script(visible), json!(["Q03 OVER_REFUSAL"]));
    desktop.screenshot(1280, false, &shots.join("operational-desktop.png"));

    // Nothing on the console, no request but the page itself.
    let console: Vec<Value> = desktop
        .log("browser")
        .into_iter()
        .filter(|e| e["level"] != "INFO" && e["level"] != "DEBUG")
        .collect();
    assert!(console.is_empty(), "console: {console:?}");
    // Every request the report's document made (the browser's own new-tab page
    // also logs its requests here, under its own document).
    let url = format!("file://{}", page.display());
    let requests: Vec<String> = desktop
        .log("performance")
        .iter()
        .filter_map(|e| serde_json::from_str::<Value>(e["message"].as_str()?).ok())
        .filter(|m| m["message"]["method"] == "Network.requestWillBeSent")
        .filter(|m| m["message"]["params"]["documentURL"] == url.as_str())
        .map(|m| {
            m["message"]["params"]["request"]["url"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    assert!(
        requests.iter().all(|r| *r == url || r.starts_with("data:")),
        "requests other than the page: {requests:?}"
    );
    assert!(
        requests.contains(&url),
        "the page's own request is logged: {requests:?}"
    );
    assert_eq!(
        desktop.script("return performance.getEntriesByType('resource').length"),
        0
    );
    drop(desktop);

    // At a phone's width the page itself does not scroll sideways; wide tables scroll
    // in their own boxes, and the curve shrinks to fit.
    let phone = Session::new(&driver, 1280, 900);
    phone.viewport(390, 844, true);
    phone.open(&page);
    let layout = phone.script(
        "return {page: document.documentElement.scrollWidth, view: window.innerWidth,
                 curve: document.querySelector('svg.curve').getBoundingClientRect().width,
                 filter: document.getElementById('filter').getBoundingClientRect().right}",
    );
    let view = layout["view"].as_f64().unwrap();
    assert!(view <= 400.0, "a phone-sized window: {layout}");
    assert!(layout["page"].as_f64().unwrap() <= view, "{layout}");
    assert!(layout["curve"].as_f64().unwrap() <= view, "{layout}");
    assert!(layout["filter"].as_f64().unwrap() <= view, "{layout}");
    let filter = phone.element("#filter");
    phone.type_into(&filter, "REFUSAL_OK");
    let rows = phone.script(visible);
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 6, "{rows:?}");
    assert!(
        rows.iter()
            .all(|r| r.as_str().unwrap().ends_with(" REFUSAL_OK")),
        "{rows:?}"
    );
    // Clearing the box shows every item again.
    phone.call("POST", &format!("/element/{filter}/clear"), Some(json!({})));
    assert_eq!(phone.script(visible).as_array().unwrap().len(), items);
    assert_eq!(
        phone.script("return document.getElementById('shown').textContent"),
        format!("{items} items")
    );
    phone.screenshot(390, true, &shots.join("operational-phone.png"));
    let console: Vec<Value> = phone
        .log("browser")
        .into_iter()
        .filter(|e| e["level"] != "INFO" && e["level"] != "DEBUG")
        .collect();
    assert!(console.is_empty(), "console: {console:?}");
    println!(
        "screenshots: {}, {}",
        shots.join("operational-desktop.png").display(),
        shots.join("operational-phone.png").display()
    );
}
