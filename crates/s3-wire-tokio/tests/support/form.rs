//! A browser-style `multipart/form-data` upload: the fields of a presigned POST, then the
//! file, as an HTML form posts them (hand-written so that the test depends on no form
//! encoder of the client under test).

/// The body and `Content-Type` of a form with `fields` (in order) and the file last.
pub fn multipart_form(
    fields: &[(String, String)],
    file_name: &str,
    file_type: &str,
    file: &[u8],
) -> (String, Vec<u8>) {
    let boundary = "----s3w-form-boundary-7MA4YWxkTrZu0gW";
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    }
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\n\
             Content-Type: {file_type}\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(file);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}
