//! Files of well-known formats that are not grail's documents, though they
//! are JSON or YAML and a kind's selector could pick them (the shipped
//! library's security binding is any mapping without a `kind` key, and so is
//! a `package.json`). The language server never judges them unless the
//! workspace file names them in a deployment (docs/workspace.md, "Which
//! files the editor judges").
//!
//! The list is data, here and only here: a glob matched against the file's
//! whole path (so `**/` reaches any depth) and the format it is, for what the
//! editor says. A format listed whose files grail never reads as documents
//! (TOML manifests) is listed all the same: the list says what is not
//! grail's, whatever grail reads.

use std::path::Path;
use std::sync::LazyLock;

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

/// Each well-known format: the globs of its files, and its name.
pub const FORMATS: &[(&[&str], &str)] = &[
    (&["**/.github/workflows/**"], "a GitHub Actions workflow"),
    (
        &[
            "**/.github/dependabot.{yml,yaml}",
            "**/.github/ISSUE_TEMPLATE/**",
            "**/.github/DISCUSSION_TEMPLATE/**",
            "**/.github/FUNDING.{yml,yaml}",
            "**/.github/release.{yml,yaml}",
            "**/.github/labeler.{yml,yaml}",
        ],
        "GitHub's repository configuration",
    ),
    (&["**/action.{yml,yaml}"], "a GitHub Action's metadata"),
    (
        &[
            "**/.gitlab-ci.{yml,yaml}",
            "**/.circleci/**",
            "**/.travis.{yml,yaml}",
            "**/azure-pipelines.{yml,yaml}",
            "**/bitbucket-pipelines.{yml,yaml}",
            "**/appveyor.{yml,yaml}",
            "**/.drone.{yml,yaml}",
            "**/.woodpecker.{yml,yaml}",
            "**/.woodpecker/**",
            "**/.buildkite/**",
            "**/cloudbuild.{yml,yaml}",
        ],
        "a CI service's pipeline",
    ),
    (
        &[
            "**/package.json",
            "**/package-lock.json",
            "**/npm-shrinkwrap.json",
            "**/pnpm-lock.yaml",
            "**/pnpm-workspace.yaml",
            "**/yarn.lock",
            "**/.yarnrc.yml",
            "**/bun.lock",
            "**/deno.json",
            "**/deno.jsonc",
            "**/deno.lock",
            "**/lerna.json",
            "**/composer.json",
            "**/composer.lock",
            "**/Cargo.toml",
            "**/Cargo.lock",
            "**/pyproject.toml",
            "**/Pipfile.lock",
            "**/environment.{yml,yaml}",
            "**/pubspec.{yaml,lock}",
            "**/Chart.{yaml,lock}",
            "**/node_modules/**",
        ],
        "a package manifest or lockfile",
    ),
    (
        &[
            "**/tsconfig*.json",
            "**/jsconfig*.json",
            "**/.eslintrc*",
            "**/.prettierrc*",
            "**/.babelrc*",
            "**/babel.config.json",
            "**/biome.json",
            "**/biome.jsonc",
            "**/turbo.json",
            "**/vercel.json",
            "**/renovate.json",
            "**/renovate.json5",
            "**/.renovaterc*",
            "**/.markdownlint*",
            "**/.vscode/**",
            "**/.devcontainer/**",
            "**/.devcontainer.json",
        ],
        "a development tool's configuration",
    ),
    (
        &[
            "**/docker-compose*.{yml,yaml}",
            "**/compose.{yml,yaml}",
            "**/compose.*.{yml,yaml}",
            "**/kustomization.{yml,yaml}",
            "**/skaffold.{yml,yaml}",
            "**/serverless.{yml,yaml}",
            "**/app.yaml",
        ],
        "a container or deployment tool's file",
    ),
    (
        &[
            "**/.pre-commit-config.{yml,yaml}",
            "**/.pre-commit-hooks.{yml,yaml}",
            "**/mkdocs.{yml,yaml}",
            "**/.readthedocs.{yml,yaml}",
            "**/codecov.{yml,yaml}",
            "**/.codecov.{yml,yaml}",
            "**/.yamllint",
            "**/.yamllint.{yml,yaml}",
            "**/.golangci.{yml,yaml}",
            "**/.goreleaser.{yml,yaml}",
            "**/.clang-format",
            "**/.clang-tidy",
            "**/CITATION.cff",
        ],
        "a tool's configuration",
    ),
];

/// Every glob of [`FORMATS`], compiled once; each match's index is mapped back to its format.
static GLOBS: LazyLock<(GlobSet, Vec<&'static str>)> = LazyLock::new(|| {
    let mut set = GlobSetBuilder::new();
    let mut format_of = Vec::new();
    for (globs, format) in FORMATS {
        for glob in *globs {
            // INVARIANT: the table's globs are constants, each compiled by the tests below.
            if let Ok(g) = glob_of(glob) {
                set.add(g);
                format_of.push(*format);
            }
        }
    }
    (set.build().unwrap_or_else(|_| GlobSet::empty()), format_of)
});

/// A glob whose `*` stays within one path segment (`**` crosses them).
fn glob_of(glob: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(glob).literal_separator(true).build()
}

/// The well-known format that claims `path`, if one does: `a GitHub Actions workflow`.
pub fn claimed_by(path: &Path) -> Option<&'static str> {
    let (set, format_of) = &*GLOBS;
    set.matches(path).first().and_then(|&i| format_of.get(i).copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_glob_of_the_table_compiles() {
        for (globs, _) in FORMATS {
            for glob in *globs {
                assert!(glob_of(glob).is_ok(), "`{glob}`");
            }
        }
    }

    #[test]
    fn well_known_files_are_claimed_and_documents_are_not() {
        let claimed = [
            ("/repo/package.json", "a package manifest or lockfile"),
            ("/repo/web/package-lock.json", "a package manifest or lockfile"),
            ("/repo/.github/workflows/release.yml", "a GitHub Actions workflow"),
            ("/repo/.github/workflows/nested/ci.yaml", "a GitHub Actions workflow"),
            ("/repo/tsconfig.build.json", "a development tool's configuration"),
            ("/repo/docker-compose.override.yml", "a container or deployment tool's file"),
            ("/repo/compose.yaml", "a container or deployment tool's file"),
            ("/repo/Cargo.toml", "a package manifest or lockfile"),
            ("/repo/node_modules/x/data.yaml", "a package manifest or lockfile"),
            ("/repo/.pre-commit-config.yaml", "a tool's configuration"),
        ];
        for (path, format) in claimed {
            assert_eq!(claimed_by(Path::new(path)), Some(format), "{path}");
        }
        for path in [
            "/repo/guardrails/security.yaml",
            "/repo/org/repo.yaml",
            "/repo/items/tracker-issue-412.md",
            "/repo/packages.json",
            "/repo/.github/guardrails/security.yaml",
            "/repo/workflows/release.yml",
            "/repo/tsconfigs/guardrails/security.json",
        ] {
            assert_eq!(claimed_by(Path::new(path)), None, "{path}");
        }
    }
}
