//! Framed connections over madsim TCP: a reader that yields decoded
//! messages until EOF, and a writer task that batches frames into one flush.

use futures::channel::mpsc;
use futures::StreamExt;
use madsim::net::TcpStream;
use serde::de::DeserializeOwned;
use serde::Serialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt, ReadHalf, WriteHalf};

use crate::proto::frame;

/// Reads one frame; `None` on EOF, error, or an undecodable frame.
pub async fn read_frame<T: DeserializeOwned>(r: &mut ReadHalf<TcpStream>, buf: &mut Vec<u8>) -> Option<T> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len).await.ok()?;
    let len = u32::from_be_bytes(len) as usize;
    if len > frame::MAX_FRAME {
        return None;
    }
    buf.resize(len, 0);
    r.read_exact(buf).await.ok()?;
    frame::decode(buf)
}

/// A command to a writer task.
pub enum WriteCmd {
    Frame(Vec<u8>),
    Close,
}

/// Encodes a message for a writer.
pub fn encoded<T: Serialize>(msg: &T) -> WriteCmd {
    let mut out = Vec::new();
    frame::encode(msg, &mut out);
    WriteCmd::Frame(out)
}

/// Writes frames until told to close, the channel closes, or the peer
/// goes away. Frames queued together leave in one flush.
pub async fn writer(mut w: WriteHalf<TcpStream>, mut rx: mpsc::UnboundedReceiver<WriteCmd>) {
    while let Some(cmd) = rx.next().await {
        let mut batch = match cmd {
            WriteCmd::Frame(f) => f,
            WriteCmd::Close => return,
        };
        let mut close = false;
        while let Ok(more) = rx.try_recv() {
            match more {
                WriteCmd::Frame(f) => batch.extend_from_slice(&f),
                WriteCmd::Close => {
                    close = true;
                    break;
                }
            }
        }
        if w.write_all(&batch).await.is_err() || w.flush().await.is_err() {
            return;
        }
        if close {
            return;
        }
    }
}
