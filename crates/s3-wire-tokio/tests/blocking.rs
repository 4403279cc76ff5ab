//! The blocking client (`s3_wire_tokio::blocking`) on the embedded local-s3: every kind of
//! call from a plain thread, bodies as `Read`, listings as iterators, transfers with progress
//! and cancellation, `std::io` sources and destinations; the clear panic inside a runtime;
//! a body cut short failing the read instead of ending early. And the async whole-body
//! helpers called from `block_on` on a multi-thread runtime, which run their loop as a task.

mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use s3_wire_tokio::blocking::{
    self, Kept, read_source, write_destination, write_destination_keeping_small,
};
use s3_wire_tokio::s3_ops::ops::create_bucket::CreateBucket;
use s3_wire_tokio::s3_ops::ops::delete_object::DeleteObject;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use s3_wire_tokio::s3_ops::ops::head_object::HeadObject;
use s3_wire_tokio::s3_ops::ops::list_objects_v2::ListObjectsV2;
use s3_wire_tokio::s3_ops::ops::put_object::PutObject;
use s3_wire_tokio::{Cleanup, UploadSource, bucket, key};

/// A blocking client of a fresh local-s3 with the bucket `blocking` made, and the server.
fn client() -> (blocking::Client, local_s3::LocalS3) {
    let server = local_s3::LocalS3::start().expect("start local-s3");
    let client = s3_wire_tokio::Client::builder()
        .endpoint(server.endpoint())
        .region(server.region())
        .static_credentials(server.access_key(), server.secret_key(), None)
        .retry(support::retry(3))
        .build()
        .expect("client");
    let client = blocking::Client::new(client).expect("blocking client");
    client
        .create_bucket(CreateBucket::new(bucket("blocking").unwrap()))
        .expect("create bucket");
    (client, server)
}

fn get(client: &blocking::Client, name: &str) -> blocking::GetObjectResponse {
    client
        .get_object(GetObject::new(
            bucket("blocking").unwrap(),
            key(name).unwrap(),
        ))
        .expect("get")
}

#[test]
fn operations_bodies_and_listings_from_a_plain_thread() {
    let (client, _server) = client();
    let data = support::data(5 << 20, 1);
    let put = PutObject::new(bucket("blocking").unwrap(), key("big").unwrap());
    client.put_object(put, data.clone()).expect("put");

    let head = client
        .head_object(HeadObject::new(
            bucket("blocking").unwrap(),
            key("big").unwrap(),
        ))
        .expect("head");
    assert_eq!(head.content_length, Some(data.len() as u64));

    // As a Read, in odd-sized pieces: the same bytes, in order.
    let mut response = get(&client, "big");
    assert_eq!(response.body.content_length(), Some(data.len() as u64));
    let mut read = Vec::new();
    let mut piece = vec![0; 70_001];
    loop {
        let n = response.body.read(&mut piece).expect("read");
        if n == 0 {
            break;
        }
        read.extend_from_slice(&piece[..n]);
    }
    assert_eq!(Bytes::from(read), data);

    // Whole, into a file, into a writer; half read by Read, then the rest whole.
    assert_eq!(get(&client, "big").body.bytes().expect("bytes"), data);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big");
    assert_eq!(
        get(&client, "big").body.write_to_file(&path).expect("file"),
        data.len() as u64
    );
    assert_eq!(std::fs::read(&path).unwrap(), data);
    let mut written = Vec::new();
    assert_eq!(
        get(&client, "big")
            .body
            .write_to(&mut written)
            .expect("write"),
        data.len() as u64
    );
    assert_eq!(written, data);
    let mut body = get(&client, "big").body;
    let mut first = vec![0; 1 << 20];
    body.read_exact(&mut first).expect("read_exact");
    let rest = body.bytes().expect("rest");
    assert_eq!([&first[..], &rest[..]].concat(), data);

    // Listings: three pages of two keys and one of one, lazily; the objects in key order.
    for i in 0..6 {
        let put = PutObject::new(
            bucket("blocking").unwrap(),
            key(&format!("list/{i}")).unwrap(),
        );
        client.put_object(put, format!("object {i}")).expect("put");
    }
    let listing = ListObjectsV2::new(bucket("blocking").unwrap())
        .prefix("list/")
        .max_keys(2);
    let pages: Vec<_> = client
        .list_objects_v2_pages(listing.clone())
        .map(|page| page.expect("page").result.contents.len())
        .collect();
    assert_eq!(pages, [2, 2, 2]);
    let keys: Vec<String> = client
        .list_objects_v2_pages(listing)
        .objects()
        .map(|object| object.expect("object").key)
        .collect();
    assert_eq!(
        keys,
        (0..6).map(|i| format!("list/{i}")).collect::<Vec<_>>()
    );

    // Presigned, then fetched without credentials.
    let url = client
        .presign(
            &GetObject::new(bucket("blocking").unwrap(), key("list/3").unwrap()),
            Duration::from_secs(300),
        )
        .expect("presign");
    let fetched = client.block_on(async move {
        let response = support::http_client().get(url.url()).send().await.unwrap();
        assert!(response.status().is_success(), "{}", response.status());
        response.bytes().await.unwrap()
    });
    assert_eq!(fetched, "object 3");

    // A missing key is a typed service error.
    client
        .delete_object(DeleteObject::new(
            bucket("blocking").unwrap(),
            key("list/3").unwrap(),
        ))
        .expect("delete");
    let missing = client
        .get_object(GetObject::new(
            bucket("blocking").unwrap(),
            key("list/3").unwrap(),
        ))
        .expect_err("deleted");
    assert!(missing.is_not_found(), "{missing:?}");
}

#[test]
fn transfers_with_progress_from_files_readers_and_to_writers() {
    let (client, _server) = client();
    let dir = tempfile::tempdir().unwrap();
    let data = support::data(13 << 20, 2);
    let source = dir.path().join("source");
    std::fs::write(&source, &data).unwrap();

    // A multipart upload of a file, watched from this thread until it ends.
    let mut upload = client
        .upload(
            bucket("blocking").unwrap(),
            key("file").unwrap(),
            UploadSource::file(&source),
        )
        .configure(|upload| upload.part_size(5 << 20).concurrency(2))
        .start();
    let outcome = loop {
        let progress = upload.progress();
        assert!(progress.committed <= data.len() as u64);
        if let Some(outcome) = upload.wait_timeout(Duration::from_millis(5)) {
            break outcome;
        }
    };
    assert_eq!(outcome.expect("upload").size, data.len() as u64);

    // Down to a file, and to a std::io::Write in order.
    let target = dir.path().join("target");
    let got = client
        .download(
            bucket("blocking").unwrap(),
            key("file").unwrap(),
            target.as_path(),
        )
        .configure(|download| download.part_size(5 << 20))
        .run()
        .expect("download");
    assert_eq!(got.size, data.len() as u64);
    assert_eq!(std::fs::read(&target).unwrap(), data);
    let sink = SharedSink::default();
    client
        .download(
            bucket("blocking").unwrap(),
            key("file").unwrap(),
            write_destination(sink.clone()),
        )
        .configure(|download| download.part_size(5 << 20))
        .run()
        .expect("download to a writer");
    assert_eq!(*sink.0.lock().unwrap(), data);
    assert!(sink.flushed());

    // Up from a std::io::Read of unknown length (a multipart upload of a stream).
    client
        .upload(
            bucket("blocking").unwrap(),
            key("stream").unwrap(),
            read_source(std::io::Cursor::new(data.to_vec()), None),
        )
        .configure(|upload| upload.part_size(5 << 20))
        .run()
        .expect("upload from a reader");
    assert_eq!(get(&client, "stream").body.bytes().unwrap(), data);

    // A reader that fails fails the upload, which leaves nothing under the key.
    let failed = client
        .upload(
            bucket("blocking").unwrap(),
            key("broken").unwrap(),
            read_source(FailingReader(3 << 20), None),
        )
        .configure(|upload| upload.part_size(5 << 20))
        .run()
        .expect_err("a failing reader");
    assert!(chain(&failed).contains("the reader broke"), "{failed:?}");
    let missing = client
        .head_object(HeadObject::new(
            bucket("blocking").unwrap(),
            key("broken").unwrap(),
        ))
        .expect_err("nothing stored");
    assert!(missing.is_not_found(), "{missing:?}");

    // Directories both ways.
    let tree = dir.path().join("tree");
    std::fs::create_dir_all(tree.join("a/b")).unwrap();
    std::fs::write(tree.join("a/one"), "one").unwrap();
    std::fs::write(tree.join("a/b/two"), "two").unwrap();
    let up = client
        .upload_directory(&tree, bucket("blocking").unwrap(), "tree/")
        .run()
        .expect("upload directory");
    assert_eq!(up.progress.objects_transferred, 2);
    let copy = dir.path().join("copy");
    client
        .download_directory(bucket("blocking").unwrap(), "tree/", &copy)
        .run()
        .expect("download directory");
    assert_eq!(std::fs::read(copy.join("a/b/two")).unwrap(), b"two");
    assert_eq!(std::fs::read(copy.join("a/one")).unwrap(), b"one");
}

#[test]
fn a_body_of_one_batch_is_kept_for_the_caller_and_a_larger_one_written() {
    let (client, _server) = client();
    // 1 MiB, the batch, is the largest body kept; a byte more is written.
    for (name, len, kept_whole) in [
        ("small", 1000, true),
        ("batch", 1 << 20, true),
        ("larger", (1 << 20) + 1, false),
    ] {
        let data = support::data(len, 7);
        client
            .put_object(
                PutObject::new(bucket("blocking").unwrap(), key(name).unwrap()),
                data.clone(),
            )
            .expect("put");
        let (sink, kept) = (SharedSink::default(), Kept::new());
        client
            .download(
                bucket("blocking").unwrap(),
                key(name).unwrap(),
                write_destination_keeping_small(sink.clone(), kept.clone()),
            )
            .run()
            .expect("download");
        let written = sink.0.lock().unwrap().clone();
        match kept.take() {
            Some(body) => {
                assert!(kept_whole, "{name}: kept");
                assert_eq!(body, data, "{name}");
                assert!(
                    written.is_empty() && !sink.flushed(),
                    "{name}: left to the caller"
                );
            }
            None => {
                assert!(!kept_whole, "{name}: written");
                assert_eq!(written, data, "{name}");
                assert!(sink.flushed(), "{name}");
            }
        }
    }
    // A failed download keeps nothing and writes nothing.
    let (sink, kept) = (SharedSink::default(), Kept::new());
    let missing = client
        .download(
            bucket("blocking").unwrap(),
            key("absent").unwrap(),
            write_destination_keeping_small(sink.clone(), kept.clone()),
        )
        .run()
        .expect_err("no such key");
    assert!(missing.is_not_found(), "{missing:?}");
    assert!(kept.take().is_none() && sink.0.lock().unwrap().is_empty());
}

#[test]
fn a_cancelled_upload_is_aborted_and_reported_cancelled() {
    let (client, _server) = client();
    // A slow source: the upload is still running when it is cancelled.
    let upload = client
        .upload(
            bucket("blocking").unwrap(),
            key("cancelled").unwrap(),
            read_source(SlowReader(64 << 20), None),
        )
        .configure(|upload| upload.part_size(5 << 20))
        .start();
    while upload.progress().committed == 0 {
        std::thread::sleep(Duration::from_millis(5));
    }
    upload.cancel();
    let error = upload.wait().expect_err("cancelled");
    assert!(error.is_cancelled(), "{error:?}");
    let failure = error.transfer().expect("what the transfer left");
    assert!(failure.upload_id.is_some());
    assert_eq!(failure.cleanup, Cleanup::Aborted);
}

#[test]
fn spawned_work_is_waited_for_in_steps_and_cancelled() {
    let (client, _server) = client();
    let mut head = client.spawn({
        let client = client.async_client().clone();
        async move {
            client
                .head_bucket(s3_wire_tokio::s3_ops::ops::head_bucket::HeadBucket::new(
                    bucket("blocking").unwrap(),
                ))
                .await
        }
    });
    let outcome = loop {
        if let Some(outcome) = head.wait_timeout(Duration::from_millis(5)) {
            break outcome;
        }
    };
    outcome.expect("head bucket");
    let mut sleeping = client.spawn(async {
        tokio::time::sleep(Duration::from_secs(600)).await;
        Ok(())
    });
    assert!(sleeping.wait_timeout(Duration::from_millis(20)).is_none());
    assert!(!sleeping.is_finished());
    sleeping.cancel();
    let error = sleeping.wait().expect_err("cancelled");
    assert!(error.is_cancelled(), "{error:?}");
}

#[test]
fn a_call_inside_a_runtime_panics_saying_what_to_use() {
    let (client, _server) = client();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let panic = runtime.block_on(async {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            client.head_bucket(s3_wire_tokio::s3_ops::ops::head_bucket::HeadBucket::new(
                bucket("blocking").unwrap(),
            ))
        }))
        .expect_err("a blocking call inside a runtime")
    });
    let message = panic_message(&*panic);
    assert!(message.contains("inside a Tokio runtime"), "{message}");
    assert!(
        message.contains("use the async s3_wire::Client"),
        "{message}"
    );
    // From a thread of a runtime's blocking pool, where blocking is what it is for, the
    // same call works; from a task on the same runtime's worker it panics.
    let pool = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap();
    let from_pool = client.clone();
    pool.block_on(pool.spawn_blocking(move || {
        from_pool.head_bucket(s3_wire_tokio::s3_ops::ops::head_bucket::HeadBucket::new(
            bucket("blocking").unwrap(),
        ))
    }))
    .expect("the blocking pool's thread ran it")
    .expect("head_bucket from spawn_blocking");
    let from_worker = client.clone();
    let worker = pool.block_on(pool.spawn(async move {
        from_worker.head_bucket(s3_wire_tokio::s3_ops::ops::head_bucket::HeadBucket::new(
            bucket("blocking").unwrap(),
        ))
    }));
    let panic = worker
        .expect_err("a blocking call on a worker")
        .into_panic();
    let message = panic_message(&*panic);
    assert!(message.contains("inside a Tokio runtime"), "{message}");
    // Dropped inside a runtime, the client's own runtime shuts down without panicking.
    runtime.block_on(async move { drop(client) });
}

#[test]
fn a_body_cut_short_fails_the_read_instead_of_ending() {
    // A server that promises 1,000 bytes, sends 10 and closes, every time it is asked.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut request = [0; 4096];
            let _ = stream.read(&mut request);
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nx-amz-request-id: cut\r\n\r\n0123456789",
            );
        }
    });
    let client = s3_wire_tokio::Client::builder()
        .endpoint(&endpoint)
        .region("us-east-1")
        .static_credentials("AKID", "secret", None)
        .retry(support::retry(2))
        .build()
        .unwrap();
    let client = blocking::Client::new(client).unwrap();
    let mut body = get(&client, "cut").body;
    let mut read = Vec::new();
    let error = body.read_to_end(&mut read).expect_err("a short body");
    let error = error.into_inner().expect("the client's error");
    let error = error
        .downcast::<s3_wire_tokio::Error>()
        .expect("an s3_wire_tokio::Error");
    assert!(
        matches!(error.kind(), s3_wire_tokio::ErrorKind::BodyLength { .. }),
        "{error:?}"
    );
    assert!(read.len() <= 10);
    // Whole, too.
    assert!(get(&client, "cut").body.bytes().is_err());
}

/// The async whole-body helpers called from `block_on` on a multi-thread runtime (outside
/// every task), where they run as a task: the same bytes and the same errors as in a task.
#[test]
fn async_whole_body_helpers_outside_a_task_give_the_same_result() {
    let server = local_s3::LocalS3::start().expect("start local-s3");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = s3_wire_tokio::Client::builder()
        .endpoint(server.endpoint())
        .region(server.region())
        .static_credentials(server.access_key(), server.secret_key(), None)
        .build()
        .unwrap();
    let data = support::data(3 << 20, 3);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("object");
    runtime.block_on(async {
        client
            .create_bucket(CreateBucket::new(bucket("helpers").unwrap()))
            .await
            .unwrap();
        let put = PutObject::new(bucket("helpers").unwrap(), key("object").unwrap());
        client.put_object(put, data.clone()).await.unwrap();
        let get = || GetObject::new(bucket("helpers").unwrap(), key("object").unwrap());
        assert_eq!(
            client
                .get_object(get())
                .await
                .unwrap()
                .body
                .collect()
                .await
                .unwrap(),
            data
        );
        let mut written = Vec::new();
        let n = client
            .get_object(get())
            .await
            .unwrap()
            .body
            .write_to(&mut written)
            .await
            .unwrap();
        assert_eq!((n, Bytes::from(written)), (data.len() as u64, data.clone()));
        let n = client
            .get_object(get())
            .await
            .unwrap()
            .body
            .write_to_file(&path)
            .await
            .unwrap();
        assert_eq!(n, data.len() as u64);
        // A failing writer fails the copy with its error.
        let mut full = FullWriter(1 << 20);
        let error = client
            .get_object(get())
            .await
            .unwrap()
            .body
            .write_to(&mut full)
            .await;
        let error = error.expect_err("a full writer");
        assert!(chain(&error).contains("no space left"), "{error:?}");
    });
    assert_eq!(std::fs::read(&path).unwrap(), data);
}

/// The error's message and its sources' messages.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The text a panic was raised with.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|message| message.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// A `Write` whose bytes the test reads afterwards, and that remembers a flush.
#[derive(Clone, Default)]
struct SharedSink(Arc<Mutex<Vec<u8>>>, Arc<Mutex<bool>>);

impl SharedSink {
    fn flushed(&self) -> bool {
        *self.1.lock().unwrap()
    }
}

impl Write for SharedSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        *self.1.lock().unwrap() = false;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        *self.1.lock().unwrap() = true;
        Ok(())
    }
}

/// Reads zeros, then fails after this many bytes.
struct FailingReader(usize);

impl Read for FailingReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.0 == 0 {
            return Err(std::io::Error::other("the reader broke"));
        }
        let n = buf.len().min(self.0);
        buf[..n].fill(0);
        self.0 -= n;
        Ok(n)
    }
}

/// Reads this many zeros, 64 KiB per millisecond.
struct SlowReader(usize);

impl Read for SlowReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        std::thread::sleep(Duration::from_millis(1));
        let n = buf.len().min(self.0).min(64 << 10);
        buf[..n].fill(0);
        self.0 -= n;
        Ok(n)
    }
}

/// An async writer that takes this many bytes, then fails.
struct FullWriter(usize);

impl tokio::io::AsyncWrite for FullWriter {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        if self.0 == 0 {
            return std::task::Poll::Ready(Err(std::io::Error::other("no space left")));
        }
        let n = buf.len().min(self.0);
        self.0 -= n;
        std::task::Poll::Ready(Ok(n))
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}
