//! The floor for size and instruction measurements: a trivial program that
//! only prints its arguments, built with the same profile as the probes.

fn main() {
    for arg in std::env::args().skip(1) {
        println!("{arg}");
    }
}
