//! `dar`: the Delta Arrow Reader command line tool.
//!
//! `dar info [TABLE]`, `dar schema [TABLE]`, `dar files [TABLE]`, each with `--json`,
//! `--version N` / `--timestamp T` and `-o key=value` storage options. TABLE is a path or
//! URL; without it, `dar` uses a demo table it writes itself.

#[cfg(not(target_arch = "wasm32"))]
mod cli;

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    cli::main()
}

#[cfg(target_arch = "wasm32")]
fn main() {}
