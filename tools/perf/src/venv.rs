//! Python venvs under the harness's target directory, made from PyPI on first use: the
//! Python peers', the AWS CLI's and moto's. A venv's name carries a hash of what it
//! installs (a new pin makes a new venv), and a marker written last says it is complete.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What a venv installs: a pinned requirements file, or one pinned package.
pub enum Install<'a> {
    Requirements(&'a Path),
    Package(&'a str),
}

/// The python of the venv `name` that holds `install`, making the venv first if needed.
pub fn python(name: &str, install: Install<'_>) -> Result<PathBuf, String> {
    let (key, pip_args): (Vec<u8>, Vec<String>) = match install {
        Install::Requirements(file) => (
            std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?,
            vec!["-r".into(), file.display().to_string()],
        ),
        Install::Package(pin) => (pin.as_bytes().to_vec(), vec![pin.to_owned()]),
    };
    let hash = key.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let venv = target_dir()?.join(format!("perf-venv-{name}-{hash:016x}"));
    let python = venv.join("bin/python");
    if venv.join("s3w-complete").exists() {
        return Ok(python);
    }
    let _ = std::fs::remove_dir_all(&venv);
    let interpreter = std::env::var("S3W_PYTHON").unwrap_or_else(|_| "python3".into());
    eprintln!("perf: making the {name} venv {}", venv.display());
    succeed(
        Command::new(&interpreter).arg("-m").arg("venv").arg(&venv),
        &format!("{interpreter} -m venv (set S3W_PYTHON to another Python 3 interpreter)"),
    )?;
    succeed(
        pip_install(&python).args(&pip_args),
        &format!("pip install {} (from PyPI)", pip_args.join(" ")),
    )?;
    std::fs::write(venv.join("s3w-complete"), b"").map_err(|e| e.to_string())?;
    Ok(python)
}

/// Builds the maturin project `source` (this repository's Python package) into a wheel
/// with the maturin of `python`'s venv (release, `--locked`, in the harness's target
/// directory, so what the package shares with the harness's own graph is compiled once)
/// and installs it there in place of the last one. The wheel goes to
/// `<target>/perf-peers/<peer>/wheels`; nothing is written into the source tree.
pub fn install_maturin_package(peer: &str, python: &Path, source: &Path) -> Result<(), String> {
    let bin = python.parent().ok_or("no venv bin directory")?;
    let venv = bin.parent().ok_or("no venv directory")?;
    let wheels = target_dir()?.join("perf-peers").join(peer).join("wheels");
    let _ = std::fs::remove_dir_all(&wheels);
    eprintln!("perf: building {} for the {peer} peer", source.display());
    let mut maturin = s3wire_python_tests::maturin(bin);
    succeed(
        maturin
            .args(["build", "--release", "--locked", "--quiet", "--interpreter"])
            .arg(python)
            .arg("--out")
            .arg(&wheels)
            .current_dir(source)
            .env("VIRTUAL_ENV", venv)
            .env("CARGO_TARGET_DIR", target_dir()?),
        &format!("maturin build of {}", source.display()),
    )?;
    let wheel = std::fs::read_dir(&wheels)
        .map_err(|e| format!("{}: {e}", wheels.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .find(|path| path.extension().is_some_and(|ext| ext == "whl"))
        .ok_or_else(|| format!("no wheel in {}", wheels.display()))?;
    succeed(
        pip_install(python)
            .args(["--force-reinstall", "--no-deps"])
            .arg(&wheel),
        &format!("pip install {}", wheel.display()),
    )
}

/// `pip install` of `python`'s venv, quiet; what to install is added by the caller.
fn pip_install(python: &Path) -> Command {
    let mut pip = Command::new(python);
    pip.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
    ]);
    pip
}

/// The harness's target directory (where its venvs and the peers' builds live).
pub fn target_dir() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    exe.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .ok_or_else(|| "no target directory".to_owned())
}

/// Runs a setup step (a build, a venv) with its output shown; `what` names it in errors.
pub fn succeed(command: &mut Command, what: &str) -> Result<(), String> {
    let status = command.status().map_err(|e| format!("{what}: {e}"))?;
    status
        .success()
        .then_some(())
        .ok_or(format!("{what}: {status}"))
}
