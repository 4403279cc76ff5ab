//! The adapter's layers point one way: every `crate::…` path in `src/` (a `use`, a path in
//! code, a path in a macro's tokens) names a module of a lower layer than its own, in the
//! order written in docs/architecture.md ("Layers of s3-wire-tokio"). Nothing of a test
//! module counts (a test may build a whole client to exercise a low module). A module
//! missing from the written order fails too, so a new file gets a place in the picture.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// The written order: each module's layer, lowest 1.
fn written_layers() -> BTreeMap<String, usize> {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/architecture.md");
    let doc = std::fs::read_to_string(&doc).unwrap();
    let section = doc
        .split("\n## Layers of s3-wire-tokio\n")
        .nth(1)
        .expect("docs/architecture.md has a section \"Layers of s3-wire-tokio\"");
    let section = section.split("\n## ").next().unwrap();
    let mut layers = BTreeMap::new();
    for line in section.lines() {
        let Some((number, rest)) = line.split_once(". ") else {
            continue;
        };
        let Ok(layer) = number.trim().parse::<usize>() else {
            continue;
        };
        // The modules are the code spans before the dash that starts the description.
        let names = rest.split(" — ").next().unwrap();
        for name in names.split('`').skip(1).step_by(2) {
            let previous = layers.insert(name.to_owned(), layer);
            assert!(previous.is_none(), "{name} is written in two layers");
        }
    }
    assert!(layers.len() > 10, "the order was not read: {layers:?}");
    layers
}

/// The top-level module a source file belongs to (`transfer/download.rs` → `transfer`).
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative.components().next().unwrap().as_os_str();
    first.to_str().unwrap().trim_end_matches(".rs").to_owned()
}

fn rust_files(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .parse_args::<syn::Meta>()
                .is_ok_and(|meta| meta.path().is_ident("test"))
    })
}

/// Every first segment after `crate::` in one file, test modules left out.
#[derive(Default)]
struct CratePaths {
    first_segments: BTreeSet<String>,
}

impl CratePaths {
    fn tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        for (i, token) in tokens.iter().enumerate() {
            match token {
                TokenTree::Group(group) => self.tokens(group.stream()),
                TokenTree::Ident(ident) if ident == "crate" => {
                    // `crate :: name`: two `:` puncts, then the name (or a `{…}` group of a
                    // `use` tree, whose names are read by `visit_use_tree`).
                    if let (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) =
                        (tokens.get(i + 1), tokens.get(i + 2))
                        && a.as_char() == ':'
                        && b.as_char() == ':'
                    {
                        match tokens.get(i + 3) {
                            Some(TokenTree::Ident(name)) => {
                                self.first_segments.insert(name.to_string());
                            }
                            Some(TokenTree::Group(group)) => {
                                for tree in group.stream() {
                                    if let TokenTree::Ident(name) = tree {
                                        self.first_segments.insert(name.to_string());
                                    }
                                }
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

impl<'ast> Visit<'ast> for CratePaths {
    fn visit_item_mod(&mut self, module: &'ast syn::ItemMod) {
        if !is_cfg_test(&module.attrs) {
            syn::visit::visit_item_mod(self, module);
        }
    }

    fn visit_item_fn(&mut self, function: &'ast syn::ItemFn) {
        if !is_cfg_test(&function.attrs) {
            syn::visit::visit_item_fn(self, function);
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        if is_cfg_test(&item.attrs) {
            return;
        }
        if let syn::UseTree::Path(path) = &item.tree
            && path.ident == "crate"
        {
            let mut firsts = Vec::new();
            first_names(&path.tree, &mut firsts);
            self.first_segments.extend(firsts);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let mut segments = path.segments.iter();
        if let (Some(first), Some(second)) = (segments.next(), segments.next())
            && first.ident == "crate"
        {
            self.first_segments.insert(second.ident.to_string());
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }
}

/// The names a `use crate::…` tree starts with.
fn first_names(tree: &syn::UseTree, names: &mut Vec<String>) {
    match tree {
        syn::UseTree::Path(path) => names.push(path.ident.to_string()),
        syn::UseTree::Name(name) => names.push(name.ident.to_string()),
        syn::UseTree::Rename(rename) => names.push(rename.ident.to_string()),
        syn::UseTree::Group(group) => {
            for tree in &group.items {
                first_names(tree, names);
            }
        }
        syn::UseTree::Glob(_) => names.push("*".to_owned()),
    }
}

/// What `lib.rs` re-exports at the crate root, by name: the module that defines it, or
/// `None` for another crate re-exported (`credentials`, `reqwest`, `s3_ops`, …).
fn root_exports(lib: &syn::File) -> BTreeMap<String, Option<String>> {
    let mut exports = BTreeMap::new();
    for item in &lib.items {
        let syn::Item::Use(item) = item else { continue };
        match &item.tree {
            syn::UseTree::Path(path) => {
                let module = path.ident.to_string();
                let mut names = Vec::new();
                exported_names(&path.tree, &mut names);
                let local = lib
                    .items
                    .iter()
                    .any(|item| matches!(item, syn::Item::Mod(m) if m.ident == module));
                for name in names {
                    exports.insert(name, local.then(|| module.clone()));
                }
            }
            // Another crate, as itself or renamed (`pub use s3_wire_credentials as credentials`).
            syn::UseTree::Name(name) => {
                exports.insert(name.ident.to_string(), None);
            }
            syn::UseTree::Rename(rename) => {
                exports.insert(rename.rename.to_string(), None);
            }
            _ => {}
        }
    }
    exports
}

fn exported_names(tree: &syn::UseTree, names: &mut Vec<String>) {
    match tree {
        syn::UseTree::Path(path) => exported_names(&path.tree, names),
        syn::UseTree::Name(name) => names.push(name.ident.to_string()),
        syn::UseTree::Rename(rename) => names.push(rename.rename.to_string()),
        syn::UseTree::Group(group) => {
            for tree in &group.items {
                exported_names(tree, names);
            }
        }
        syn::UseTree::Glob(_) => {}
    }
}

#[test]
fn no_module_imports_one_above_it() {
    let layers = written_layers();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = syn::parse_file(&std::fs::read_to_string(src.join("lib.rs")).unwrap()).unwrap();
    let exports = root_exports(&lib);
    let modules: BTreeSet<String> = lib
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Mod(m) => Some(m.ident.to_string()),
            _ => None,
        })
        .collect();
    let unplaced: Vec<_> = modules
        .iter()
        .filter(|m| !layers.contains_key(*m))
        .collect();
    assert!(
        unplaced.is_empty(),
        "modules with no layer in docs/architecture.md: {unplaced:?}"
    );
    let stale: Vec<_> = layers.keys().filter(|m| !modules.contains(*m)).collect();
    assert!(
        stale.is_empty(),
        "docs/architecture.md places modules that do not exist: {stale:?}"
    );

    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut against = Vec::new();
    let mut checked = 0;
    for file in files.iter().filter(|f| !f.ends_with("lib.rs")) {
        let module = module_of(&src, file);
        let own = layers[&module];
        let source = std::fs::read_to_string(file).unwrap();
        let parsed = syn::parse_file(&source).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut paths = CratePaths::default();
        paths.visit_file(&parsed);
        for first in paths.first_segments {
            let target = if modules.contains(&first) {
                Some(first.clone())
            } else if let Some(defined_in) = exports.get(&first) {
                defined_in.clone()
            } else {
                panic!(
                    "{}: crate::{first} is neither a module nor a root re-export",
                    file.display()
                )
            };
            let Some(target) = target else { continue };
            checked += 1;
            if target != module && layers[&target] >= own {
                against.push(format!(
                    "{} (layer {own}) uses crate::{first}: {target} is layer {}",
                    file.strip_prefix(&src).unwrap().display(),
                    layers[&target]
                ));
            }
        }
    }
    assert!(
        checked > 50,
        "too few imports read ({checked}): the reader is broken"
    );
    assert!(
        against.is_empty(),
        "imports against the order of docs/architecture.md:\n  {}",
        against.join("\n  ")
    );
}

#[test]
fn the_reader_finds_each_kind_of_crate_path_and_skips_tests() {
    let source = r#"
        use crate::{body::Body, error};
        use crate::client::Client as C;
        /// [`x`](crate::transfer::Progress) is a doc link, not an import.
        fn f() {
            crate::sign::digest(1);
            format!("{}", crate::hooks::name());
            let _: crate::Error;
        }
        macro_rules! m { () => { crate::paginate::Paginator } }
        #[cfg(test)]
        mod tests { use crate::ops::get; fn g() { crate::transfer::x(); } }
    "#;
    let mut paths = CratePaths::default();
    paths.visit_file(&syn::parse_file(source).unwrap());
    let found: Vec<_> = paths.first_segments.iter().map(String::as_str).collect();
    assert_eq!(
        found,
        [
            "Error", "body", "client", "error", "hooks", "paginate", "sign"
        ]
    );
}
