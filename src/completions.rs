//! `grail completions SHELL` and `grail man`: generated from the command
//! line's own definition (clap_complete, clap_mangen), so they never drift
//! from it.

use std::process::ExitCode;

use camino::Utf8Path;
use clap::CommandFactory as _;

use crate::documents::lower_first;
use crate::{Cli, Fatal};

pub fn completions(shell: clap_complete::Shell) -> Result<ExitCode, Fatal> {
    let mut command = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command, "grail", &mut out);
    write_stdout(&out)
}

pub fn man(out: Option<&Utf8Path>) -> Result<ExitCode, Fatal> {
    let command = Cli::command();
    let Some(dir) = out else {
        let mut page = Vec::new();
        render(&command, &mut page)?;
        return write_stdout(&page);
    };
    let cannot =
        |path: &Utf8Path, e: std::io::Error| Fatal(format!("cannot write `{path}`: {}", lower_first(&e.to_string())));
    std::fs::create_dir_all(dir).map_err(|e| cannot(dir, e))?;
    let mut pages = vec![("grail.1".to_string(), command.clone())];
    for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
        // A page per command, named as man expects (`grail-check`); clap keeps
        // names as `&'static str`, and the process ends soon after.
        let name: &'static str = Box::leak(format!("grail-{}", sub.get_name()).into_boxed_str());
        pages.push((format!("{name}.1"), sub.clone().name(name).version(env!("CARGO_PKG_VERSION"))));
    }
    let mut listed = String::new();
    for (file, page) in pages {
        let mut text = Vec::new();
        render(&page, &mut text)?;
        let path = dir.join(&file);
        std::fs::write(&path, text).map_err(|e| cannot(&path, e))?;
        listed.push_str(&format!("{path}\n"));
    }
    write_stdout(listed.as_bytes())
}

fn render(command: &clap::Command, out: &mut Vec<u8>) -> Result<(), Fatal> {
    clap_mangen::Man::new(command.clone())
        .render(out)
        .map_err(|e| Fatal(format!("cannot render the manual page: {}", lower_first(&e.to_string()))))
}

fn write_stdout(bytes: &[u8]) -> Result<ExitCode, Fatal> {
    crate::write_stdout(&mut std::io::stdout().lock(), bytes)?;
    Ok(ExitCode::SUCCESS)
}
