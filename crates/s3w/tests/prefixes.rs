//! A recursive command on `s3://bkt/data` works on the directory `data/` and nothing beside
//! it: `data2/…` and `database.txt` share the letters but are not what the user named. Each
//! command is run against a bucket holding such siblings, which must come out untouched.

mod support;

use support::{Env, write};

/// Under `data/`: what the commands may touch.
const INSIDE: &[&str] = &["data/a.txt", "data/b.txt", "data/sub/c.txt"];
/// Beside it: what they must not.
const SIBLINGS: &[&str] = &["data2/c.txt", "database.txt", "dat/d.txt"];

/// A fresh store with bucket `bkt` holding [`INSIDE`] and [`SIBLINGS`], each object's body
/// being its own key.
fn seeded() -> Env {
    let env = Env::new();
    env.ok(&["mb", "s3://bkt"]);
    let src = tempfile::tempdir().unwrap();
    for name in INSIDE.iter().chain(SIBLINGS) {
        write(&src.path().join(name), name.as_bytes());
    }
    env.ok(&[
        "cp",
        "--recursive",
        src.path().to_str().unwrap(),
        "s3://bkt/",
    ]);
    env
}

fn keys(env: &Env, path: &str) -> Vec<String> {
    // An empty listing exits 1 with an error object (as `aws s3 ls` exits 1).
    let out = env.run(&["--json", "ls", "--recursive", path]);
    let mut keys: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|entry| entry["type"] == "object")
        .map(|entry| entry["key"].as_str().unwrap().to_owned())
        .collect();
    keys.sort();
    keys
}

fn assert_siblings_intact(env: &Env) {
    for name in SIBLINGS {
        let body = env.run(&["cat", &format!("s3://bkt/{name}")]);
        assert!(body.status.success(), "{name} is gone");
        assert_eq!(body.stdout, name.as_bytes(), "{name} changed");
    }
}

/// The files under `root`, as `/`-joined relative paths, sorted.
fn files(root: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let relative = path.strip_prefix(root).unwrap();
                found.push(relative.to_str().unwrap().replace('\\', "/"));
            }
        }
    }
    found.sort();
    found
}

#[test]
fn rm_recursive_deletes_the_directory_and_not_its_siblings() {
    let env = seeded();
    let dry = env.ok(&["rm", "--recursive", "--dryrun", "s3://bkt/data"]);
    assert_eq!(dry.lines().count(), INSIDE.len(), "{dry}");
    for name in SIBLINGS {
        assert!(
            !dry.contains(name),
            "the dry run would delete {name}: {dry}"
        );
    }
    let deleted = env.ok(&["rm", "--recursive", "s3://bkt/data"]);
    assert_eq!(deleted.lines().count(), INSIDE.len(), "{deleted}");
    assert!(keys(&env, "s3://bkt/data/").is_empty());
    assert_siblings_intact(&env);
}

#[test]
fn cp_recursive_downloads_the_directory_and_not_its_siblings() {
    let env = seeded();
    let down = tempfile::tempdir().unwrap();
    let target = down.path().join("x");
    env.ok(&[
        "cp",
        "--recursive",
        "s3://bkt/data",
        target.to_str().unwrap(),
    ]);
    assert_eq!(files(&target), ["a.txt", "b.txt", "sub/c.txt"]);
    assert_eq!(
        std::fs::read(target.join("sub/c.txt")).unwrap(),
        b"data/sub/c.txt"
    );
}

#[test]
fn cp_recursive_between_buckets_copies_the_directory_and_not_its_siblings() {
    let env = seeded();
    env.ok(&["cp", "--recursive", "s3://bkt/data", "s3://bkt/copy"]);
    assert_eq!(
        keys(&env, "s3://bkt/copy"),
        ["copy/a.txt", "copy/b.txt", "copy/sub/c.txt"]
    );
    assert_siblings_intact(&env);
}

#[test]
fn mv_recursive_moves_the_directory_and_not_its_siblings() {
    let env = seeded();
    env.ok(&["mv", "--recursive", "s3://bkt/data", "s3://bkt/moved"]);
    assert_eq!(
        keys(&env, "s3://bkt/moved"),
        ["moved/a.txt", "moved/b.txt", "moved/sub/c.txt"]
    );
    assert!(keys(&env, "s3://bkt/data/").is_empty());
    assert_siblings_intact(&env);

    // And down to a local directory.
    let env = seeded();
    let down = tempfile::tempdir().unwrap();
    env.ok(&[
        "mv",
        "--recursive",
        "s3://bkt/data",
        down.path().to_str().unwrap(),
    ]);
    assert_eq!(files(down.path()), ["a.txt", "b.txt", "sub/c.txt"]);
    assert!(keys(&env, "s3://bkt/data/").is_empty());
    assert_siblings_intact(&env);
}

#[test]
fn du_counts_the_directory_and_not_its_siblings() {
    let env = seeded();
    let out = env.ok(&["--json", "du", "s3://bkt/data"]);
    let total: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(total["objects"], INSIDE.len());
    let size: usize = INSIDE.iter().map(|name| name.len()).sum();
    assert_eq!(total["size"], size);
}

#[test]
fn sync_with_delete_never_reaches_the_siblings() {
    let env = seeded();
    // Up: a local directory with one of the three files; --delete prunes the other two
    // under data/ and nothing beside it.
    let local = tempfile::tempdir().unwrap();
    write(&local.path().join("a.txt"), b"data/a.txt");
    env.ok(&[
        "sync",
        "--delete",
        local.path().to_str().unwrap(),
        "s3://bkt/data",
    ]);
    assert_eq!(keys(&env, "s3://bkt/data/"), ["data/a.txt"]);
    assert_siblings_intact(&env);

    // Down: only data/ arrives.
    let down = tempfile::tempdir().unwrap();
    env.ok(&["sync", "s3://bkt/data", down.path().to_str().unwrap()]);
    assert_eq!(files(down.path()), ["a.txt"]);
}
