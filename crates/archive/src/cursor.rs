//! Page cursors: a position in the archive that survives rotation.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::error::ArchiveError;
use crate::layout::parse_stem;

/// Where a page ends: the segment's stem and the line (from 0) of the last
/// entry returned. A segment keeps its stem when rotated, and lines are
/// never rewritten, so a cursor stays valid while segments are appended,
/// rotated or (before it) expired.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ArchiveCursor {
    pub(crate) stem: String,
    pub(crate) line: usize,
}

impl ArchiveCursor {
    /// The cursor as an opaque, URL-safe token (base64 of `stem:line`).
    pub fn to_token(&self) -> String {
        URL_SAFE_NO_PAD.encode(format!("{}:{}", self.stem, self.line))
    }

    /// The cursor of a token made by [`ArchiveCursor::to_token`];
    /// [`ArchiveError::BadCursor`] for anything else.
    pub fn from_token(token: &str) -> Result<Self, ArchiveError> {
        let bytes = URL_SAFE_NO_PAD
            .decode(token)
            .map_err(|_| ArchiveError::BadCursor)?;
        let text = String::from_utf8(bytes).map_err(|_| ArchiveError::BadCursor)?;
        let (stem, line) = text.rsplit_once(':').ok_or(ArchiveError::BadCursor)?;
        // Digits only: `usize::from_str` would also take a leading '+'.
        if line.is_empty() || !line.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ArchiveError::BadCursor);
        }
        let line = line.parse().map_err(|_| ArchiveError::BadCursor)?;
        parse_stem(stem).ok_or(ArchiveError::BadCursor)?;
        Ok(ArchiveCursor {
            stem: stem.to_owned(),
            line,
        })
    }
}
