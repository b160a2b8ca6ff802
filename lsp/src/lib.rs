//! grail-lsp: the grail language server, a thin layer over the engine's
//! database. Handlers convert positions, call one engine query, and convert
//! the answer back; the engine holds every piece of logic.
//!
//! Nothing is written to standard output but the protocol: the engine never
//! prints, and messages for people go to the client's log.

mod convert;
pub mod position;
mod server;
mod workspace;

use grail_engine::Database;
use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp_server::{LspService, Server};

pub use server::Backend;

/// Serves the protocol on `input` and `output` until the client exits, over `db`
/// (tests pass a database that logs the queries it runs).
pub async fn serve<I, O>(input: I, output: O, db: Database)
where
    I: AsyncRead + Unpin,
    O: AsyncWrite,
{
    let (service, socket) = LspService::new(|client| Backend::new(client, db));
    // INVARIANT: one message at a time, so that edits apply in the order they are sent.
    Server::new(input, output, socket).concurrency_level(1).serve(service).await;
}

/// `grail lsp`: serves the protocol on standard input and output.
pub fn run_stdio() -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(serve(tokio::io::stdin(), tokio::io::stdout(), Database::default()));
    Ok(())
}
