//! Signs one GET and prints its `Authorization` header: with SigV4, and with
//! SigV4a for region set `*` when the `sigv4a` feature is on. The program whose
//! build weight `measurements/sigv4-signing.md` compares with and without the
//! feature: `cargo build --release -p sigv4-sign [--features sigv4a]` here.

use std::time::SystemTime;

use s3_sigv4::{Credentials, PayloadHash, Signer, SigningParams, SigningTime};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let signer = Signer::new();
    let credentials = Credentials::new(
        "AKIDEXAMPLE",
        "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        None,
    );
    let time = SigningTime::from_system_time(SystemTime::now())?;
    let url = "https://examplebucket.s3.amazonaws.com/photos/a.jpg";

    let mut request = http::Request::get(url).body(())?;
    let params = SigningParams::new("us-east-1", "s3", time, PayloadHash::Empty);
    signer.sign_headers(&mut request, &credentials, &params)?;
    println!("SigV4:  {}", request.headers()["authorization"].to_str()?);

    #[cfg(feature = "sigv4a")]
    {
        let mut request = http::Request::get(url).body(())?;
        let params = SigningParams::v4a("*", "s3", time, PayloadHash::Empty);
        signer.sign_headers(&mut request, &credentials, &params)?;
        println!("SigV4a: {}", request.headers()["authorization"].to_str()?);
    }
    Ok(())
}
