//! `s3w`: the command-line client. All the work is in the `s3w` library.

fn main() {
    std::process::exit(s3w::main_with_args(std::env::args_os()));
}
