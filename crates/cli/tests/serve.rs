//! `rdmalab serve`: prints its URL, answers on 127.0.0.1, stops cleanly on Ctrl-C (SIGINT).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn http_get(addr: &str, path: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn serve_prints_its_url_answers_and_stops_on_ctrl_c() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdmalab"))
        .args(["serve", "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    // "rdmalab lab: http://127.0.0.1:PORT/  (Ctrl-C stops it)"
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"));
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    assert!(addr.starts_with("127.0.0.1:"), "binds to localhost: {addr}");
    let home = http_get(&addr, "/");
    assert!(home.starts_with("HTTP/1.1 200"), "{home}");
    assert!(home.contains("/assets/app.js"));
    let presets = http_get(&addr, "/api/presets");
    assert!(presets.contains("lesson5b"), "{presets}");
    // Ctrl-C: a graceful stop with exit status 0.
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let start = Instant::now();
    let code = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "did not stop");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(code.success(), "{code}");
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    assert!(rest.contains("stopped"), "{rest}");
}

#[test]
fn a_port_in_use_is_bad_input() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_rdmalab"))
        .args(["serve", "--port", &port])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot listen") && err.contains("--port"),
        "{err}"
    );
}
