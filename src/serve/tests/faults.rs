//! Loopback tests of the fault modes (a range ignored, failures, 429 bursts, resets, bodies
//! cut short, slow or shifted) and of slow or stalled clients: each fault as the browser and
//! fault-matrix tests rely on it, and a slow client never stopping others being served.

use super::*;

#[tokio::test]
async fn fault_ignore_range() {
    let f = fixture();
    let faults = Faults {
        ignore_range: true,
        ..Faults::default()
    };
    let s = StaticServer::start(ServeConfig::new(&f.root).with_faults(faults))
        .await
        .unwrap();
    let r = get_range(&s, "/digits.bin", "bytes=2-3").await;
    assert_eq!((r.status, r.body.as_slice()), (200, DIGITS));
    assert_eq!(r.header("content-range"), None);
    assert_eq!(r.header("accept-ranges"), Some("none"));
    let log = s.stats().entries();
    assert_eq!(log[0].range.as_deref(), Some("bytes=2-3"));
    assert_eq!(log[0].status, 200);
}

#[tokio::test]
async fn fault_fail_first_requests() {
    let f = fixture();
    let faults = Faults {
        fail_first: 2,
        ..Faults::default()
    };
    let s = StaticServer::start(ServeConfig::new(&f.root).with_faults(faults))
        .await
        .unwrap();
    // Preflights are not faulted and not counted against `fail_first`.
    assert_eq!(request(&s, "OPTIONS", "/digits.bin", "").await.status, 204);
    let mut c = Client::connect(&s).await;
    for expected in [503, 503, 200, 200] {
        c.send("GET /digits.bin HTTP/1.1\r\n\r\n").await;
        let r = c.read(false).await;
        assert_eq!(r.status, expected);
        assert_eq!(r.header("access-control-allow-origin"), Some("*"));
        if expected == 503 {
            assert_eq!(r.header("retry-after"), Some("0"));
        }
    }
    let statuses: Vec<u16> = s.stats().entries().iter().map(|e| e.status).collect();
    assert_eq!(statuses, [204, 503, 503, 200, 200]);
}

#[tokio::test]
async fn fault_filter_by_path() {
    let f = fixture();
    let faults = Faults {
        fail_first: 1,
        path_filter: Some(".parquet".into()),
        ..Faults::default()
    };
    let config = ServeConfig::new(&f.root)
        .with_mount("/tables", &f.tables)
        .with_faults(faults);
    let s = StaticServer::start(config).await.unwrap();
    let log = "/tables/t/_delta_log/00000000000000000000.json";
    assert_eq!(get(&s, log).await.status, 200);
    assert_eq!(get(&s, "/tables/t/part-0.parquet").await.status, 503);
    assert_eq!(get(&s, "/tables/t/part-0.parquet").await.status, 200);
}

#[tokio::test]
async fn fault_truncated_body() {
    let f = fixture();
    let faults = Faults {
        truncate_body: Some(4),
        ..Faults::default()
    };
    let s = StaticServer::start(ServeConfig::new(&f.root).with_faults(faults))
        .await
        .unwrap();
    let mut c = Client::connect(&s).await;
    c.send("GET /digits.bin HTTP/1.1\r\n\r\n").await;
    let r = c.read(false).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-length"), Some("10"));
    assert_eq!(r.body, b"0123");
    assert!(c.closed().await);
    // HEAD has no body to cut.
    let r = request(&s, "HEAD", "/digits.bin", "").await;
    assert_eq!(r.header("content-length"), Some("10"));
    // Ranges are cut too.
    let r = get_range(&s, "/big.parquet", "bytes=100-199").await;
    assert_eq!((r.status, r.body.len()), (206, 4));
    assert_eq!(r.header("content-length"), Some("100"));
}

#[tokio::test]
async fn fault_bursts_of_429_and_resets() {
    let f = fixture();
    let faults = Faults {
        reset_first: 1,
        fail_first: 2,
        fail_status: Some(429),
        repeat_every: Some(3),
        ..Faults::default()
    };
    let s = StaticServer::start(ServeConfig::new(&f.root).with_faults(faults))
        .await
        .unwrap();
    for _ in 0..2 {
        // The reset: the connection closes with no answer at all.
        let mut c = Client::connect(&s).await;
        c.send("GET /digits.bin HTTP/1.1\r\n\r\n").await;
        assert!(c.closed().await, "a reset connection sends nothing");
        let r = get(&s, "/digits.bin").await;
        assert_eq!((r.status, r.header("retry-after")), (429, Some("0")));
        assert_eq!(get(&s, "/digits.bin").await.body, DIGITS);
    }
    let statuses: Vec<u16> = s.stats().entries().iter().map(|e| e.status).collect();
    assert_eq!(statuses, [0, 429, 200, 0, 429, 200]);
    assert_eq!(s.stats().connections_open(), 0);
}

#[tokio::test]
async fn fault_slow_body_sends_every_byte_in_pieces() {
    let f = fixture();
    let slow = SlowBody {
        chunk: 3,
        pause: Duration::from_millis(30),
    };
    let faults = Faults {
        slow_body: Some(slow),
        ..Faults::default()
    };
    let s = StaticServer::start(ServeConfig::new(&f.root).with_faults(faults))
        .await
        .unwrap();
    let t = Instant::now();
    let r = get(&s, "/digits.bin").await;
    // Ten bytes in pieces of three: three pauses at least.
    assert!(
        t.elapsed() >= Duration::from_millis(90),
        "{:?}",
        t.elapsed()
    );
    assert_eq!((r.status, r.body.as_slice()), (200, DIGITS));
    let r = get_range(&s, "/big.parquet", "bytes=1000-1019").await;
    assert_eq!(r.status, 206);
    let want: Vec<u8> = (1000..1020u32).map(|i| (i % 251) as u8).collect();
    assert_eq!(r.body, want);
}

#[tokio::test]
async fn fault_shifted_range_says_what_it_sent() {
    let f = fixture();
    let faults = Faults {
        shift_range: true,
        ..Faults::default()
    };
    let s = StaticServer::start(ServeConfig::new(&f.root).with_faults(faults))
        .await
        .unwrap();
    let r = get_range(&s, "/digits.bin", "bytes=2-4").await;
    assert_eq!(r.status, 206);
    assert_eq!(r.header("content-range"), Some("bytes 3-5/10"));
    assert_eq!(r.body, b"345");
    let r = get_range(&s, "/digits.bin", "bytes=7-").await;
    assert_eq!(
        (r.header("content-range"), r.body.as_slice()),
        (Some("bytes 8-9/10"), &b"89"[..])
    );
    // A request without a range is answered whole.
    assert_eq!(get(&s, "/digits.bin").await.body, DIGITS);
}

/// Opens `n` connections from `ip` (a loopback address: Linux routes all of 127/8 to `lo`)
/// that send one byte of a request head every `every`, until dropped.
async fn slow_clients(
    server: &StaticServer,
    ip: [u8; 4],
    n: usize,
    every: Duration,
) -> tokio::task::JoinSet<()> {
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..n {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket
            .bind((std::net::Ipv4Addr::from(ip), 0).into())
            .unwrap();
        let mut stream = socket.connect(server.addr()).await.unwrap();
        set.spawn(async move {
            for b in b"GET /digits.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                .iter()
                .cycle()
            {
                if stream.write_all(&[*b]).await.is_err() {
                    return; // closed by the server
                }
                tokio::time::sleep(every).await;
            }
        });
    }
    set
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_never_stop_others_being_served() {
    let f = fixture();
    let config = ServeConfig {
        header_timeout: Duration::from_millis(1500),
        max_connections_per_client: 200,
        ..ServeConfig::new(&f.root)
    };
    let s = StaticServer::start(config).await.unwrap();
    // 600 connections trickling a request head, a byte every 200 ms, from one address:
    // 200 are served (slowly), 400 refused at once.
    let mut slow = slow_clients(&s, [127, 0, 0, 2], 600, Duration::from_millis(200)).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.stats().connections_refused() < 400 {
        assert!(
            Instant::now() < deadline,
            "refused {}",
            s.stats().connections_refused()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        s.stats().connections_open() <= 200,
        "{}",
        s.stats().connections_open()
    );
    // Another client is served at once, again and again.
    for _ in 0..20 {
        let t = Instant::now();
        assert_eq!(get(&s, "/digits.bin").await.body, DIGITS);
        assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    }
    // The trickling heads are cut at the header timeout, however steadily they come.
    let t = Instant::now();
    while slow.join_next().await.is_some() {}
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    let deadline = Instant::now() + Duration::from_secs(5);
    while s.stats().connections_open() > 0 {
        assert!(
            Instant::now() < deadline,
            "{} still open",
            s.stats().connections_open()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_client_that_stops_reading_is_closed_after_the_idle_timeout() {
    let f = fixture();
    // 32 MB: far more than the socket buffers on both sides hold, so the server's write
    // stalls once the client stops reading.
    let huge = vec![7u8; 32 << 20];
    std::fs::write(f.root.join("huge.bin"), &huge).unwrap();
    let config = ServeConfig {
        idle_timeout: Duration::from_millis(300),
        ..ServeConfig::new(&f.root)
    };
    let s = StaticServer::start(config).await.unwrap();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stalled = socket.connect(s.addr()).await.unwrap();
    stalled
        .write_all(b"GET /huge.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while s.stats().requests() == 0 {
        assert!(Instant::now() < deadline, "the request was not answered");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let t = Instant::now();
    while s.stats().connections_open() > 0 {
        assert!(
            Instant::now() < deadline,
            "the stalled connection is still open"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        t.elapsed() >= Duration::from_millis(250),
        "closed after {:?}",
        t.elapsed()
    );
    assert!(
        s.stats().bytes_sent() < huge.len() as u64,
        "the whole body went out ({} bytes): the write never stalled",
        s.stats().bytes_sent()
    );
    assert_eq!(s.stats().connections_accepted(), 1);
    drop(stalled);
}
