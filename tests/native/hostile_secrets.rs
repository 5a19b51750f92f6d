//! Secrets and server text in errors (issue 11): an S3-compatible server on loopback (a tiny
//! one started here) refuses every request with a body that echoes the request's signature,
//! the access key id and terminal escapes, or with 50 MB of text. The error the reader
//! returns, and what `dar` prints, names the failure in one bounded line and holds no
//! secret: not the secret key, not the access key id, not the signature the client sent.

use std::sync::{Arc, Mutex};

use delta_arrow_reader::DeltaTableBuilder;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const ACCESS_KEY_ID: &str = "AKIAIOSFODNN7EXAMPLE";
const SECRET_KEY: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

/// What the server answers every request with.
#[derive(Clone, Copy)]
enum Refusal {
    /// `403 SignatureDoesNotMatch`, echoing the signature, the key id and the string signed.
    Signature,
    /// `400` with a 50 MB body of text and escapes.
    Huge,
}

/// A server that refuses every request (see [`Refusal`]); the signatures of the
/// `Authorization` headers it got are kept in the returned list.
async fn refusing_server(refusal: Refusal) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let signatures = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let seen = Arc::clone(&signatures);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let signature = head
                    .split("Signature=")
                    .nth(1)
                    .and_then(|s| s.split(['\r', ',', ' ']).next())
                    .unwrap_or("")
                    .to_string();
                if let Ok(mut s) = seen.lock() {
                    s.push(signature.clone());
                }
                let (status, body) = match refusal {
                    Refusal::Signature => ("403 Forbidden", signature_body(&signature)),
                    Refusal::Huge => (
                        "400 Bad Request",
                        format!("\u{1b}]0;pwned\u{7}{}", "overflow ".repeat(50 << 20 >> 3)),
                    ),
                };
                let answer = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: application/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    (port, seen)
}

fn signature_body(signature: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SignatureDoesNotMatch</Code>\
         <Message>The request signature we calculated does not match the signature you \
         provided.\u{1b}[2J</Message><AWSAccessKeyId>{ACCESS_KEY_ID}</AWSAccessKeyId>\
         <StringToSign>AWS4-HMAC-SHA256\n20261202T000000Z\n20261202/us-east-1/s3/aws4_request\n\
         0f0e</StringToSign><SignatureProvided>{signature}</SignatureProvided>\
         <CanonicalRequest>GET\n/bucket/t/_delta_log/\nX-Amz-Credential={ACCESS_KEY_ID}\
         </CanonicalRequest><RequestId>4442587FB7D0A2F9</RequestId></Error>"
    )
}

fn options(port: u16) -> Vec<(&'static str, String)> {
    vec![
        ("aws_endpoint", format!("http://127.0.0.1:{port}")),
        ("aws_access_key_id", ACCESS_KEY_ID.into()),
        ("aws_secret_access_key", SECRET_KEY.into()),
        ("aws_region", "us-east-1".into()),
        ("aws_allow_http", "true".into()),
    ]
}

/// Checks one error text: bounded, one line, no secret of `signatures`.
fn assert_clean(text: &str, signatures: &[String], what: &str) {
    assert!(text.len() < 2048, "{what}: {} bytes", text.len());
    assert!(!text.chars().any(char::is_control), "{what}: {text:?}");
    assert!(!text.contains(SECRET_KEY), "{what}: {text}");
    assert!(!text.contains(ACCESS_KEY_ID), "{what}: {text}");
    for s in signatures.iter().filter(|s| s.len() >= 16) {
        assert!(
            !text.contains(s.as_str()),
            "{what}: signature {s} in {text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_error_bodies_are_bounded_and_hold_no_secret() {
    for (refusal, expected) in [
        (Refusal::Signature, "SignatureDoesNotMatch"),
        (Refusal::Huge, "more characters"),
    ] {
        let (port, seen) = refusing_server(refusal).await;
        let mut builder = DeltaTableBuilder::new("s3://bucket/t/");
        for (k, v) in options(port) {
            builder = builder.with_storage_option(k, v);
        }
        let err = builder
            .load_table()
            .await
            .err()
            .unwrap_or_else(|| panic!("a refusing server gave a table"));
        let text = err.to_string();
        let signatures = seen.lock().map(|s| s.clone()).unwrap_or_default();
        assert!(
            signatures.iter().any(|s| s.len() >= 16),
            "the client sent no signature: {signatures:?}"
        );
        println!("the error: {text}");
        assert_eq!(err.code(), "io", "{text}");
        assert!(text.contains(expected), "{text}");
        assert_clean(&text, &signatures, "the error");

        // The same through `dar`, the way a user meets it.
        let mut dar = tokio::process::Command::new(env!("CARGO_BIN_EXE_dar"));
        dar.arg("head").arg("s3://bucket/t/");
        for (k, v) in options(port) {
            dar.arg("-o").arg(format!("{k}={v}"));
        }
        let out = tokio::time::timeout(std::time::Duration::from_secs(120), dar.output())
            .await
            .unwrap_or_else(|_| panic!("dar head did not end"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        let signatures = seen.lock().map(|s| s.clone()).unwrap_or_default();
        assert!(stderr.contains(expected), "{stderr}");
        assert_clean(stderr.trim_end(), &signatures, "dar's standard error");
    }
}
