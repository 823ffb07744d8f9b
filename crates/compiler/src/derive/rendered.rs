//! [`RenderedObject`]: an object's YAML rendered once for its shape (see [`super::shape`]), with the places
//! where stamping writes the instance's namespace and name, so `emit` writes an instance's object by copying
//! text. The object is rendered stamped with stand-in values and cut where they appear; one in which they
//! appear other than exactly where stamping writes (a user's text containing one) is not pre-rendered, and
//! `emit` renders it from its value. Scalars render the same wherever they stand, so the text equals
//! rendering the stamped object.

use kix_yaml::Value;

/// Stand-ins for the namespace and the instance's name while a shape's objects are rendered: plain
/// scalars (no quoting), and text no manifest holds by chance (an object that does is not pre-rendered).
pub(super) const NAMESPACE_STAND_IN: &str = "kix-stamp-namespace-5b0d7c41";
pub(super) const INSTANCE_STAND_IN: &str = "kix-stamp-instance-5b0d7c41";

/// One object's YAML, rendered once for its shape, with the places the namespace and the instance's name go.
#[derive(Debug, PartialEq, Eq)]
pub struct RenderedObject {
    pieces: Vec<Piece>,
    /// XXH3-128 of the pieces: what `emit` writes for an instance is a function of this, the namespace and
    /// the name alone, so an instance's file is known from these without rendering it (`emit::instance_key`).
    digest: u128,
}

#[derive(Debug, PartialEq, Eq)]
enum Piece {
    Text(String),
    Namespace,
    Instance,
}

impl RenderedObject {
    /// The object (stamped with the stand-ins) rendered and cut at them; `None` unless they appear exactly
    /// `sites` times, once per place stamping writes.
    pub(super) fn cut(object: &Value, sites: usize) -> Option<RenderedObject> {
        let text = kix_yaml::emit::to_string(object);
        let mut pieces = Vec::new();
        let mut rest = text.as_str();
        let mut found = 0;
        loop {
            let next = [(NAMESPACE_STAND_IN, Piece::Namespace), (INSTANCE_STAND_IN, Piece::Instance)]
                .into_iter()
                .filter_map(|(stand_in, piece)| rest.find(stand_in).map(|at| (at, stand_in.len(), piece)))
                .min_by_key(|(at, _, _)| *at);
            let Some((at, length, piece)) = next else { break };
            pieces.push(Piece::Text(rest[..at].to_string()));
            pieces.push(piece);
            rest = &rest[at + length..];
            found += 1;
        }
        pieces.push(Piece::Text(rest.to_string()));
        let digest = digest(&pieces);
        (found == sites).then_some(RenderedObject { pieces, digest })
    }

    /// The digest of the object's text and its stamping places (see the field).
    pub fn digest(&self) -> u128 {
        self.digest
    }

    /// The length of the object's YAML for an instance whose namespace and name are `namespace` and
    /// `instance` bytes long (without quotes: a lower bound, for sizing the text it is written into).
    pub fn len_for(&self, namespace: usize, instance: usize) -> usize {
        self.pieces
            .iter()
            .map(|piece| match piece {
                Piece::Text(text) => text.len(),
                Piece::Namespace => namespace,
                Piece::Instance => instance,
            })
            .sum()
    }

    /// The object's YAML for an instance, appended to `out`: what rendering its stamped object writes.
    pub fn write(&self, out: &mut String, namespace: &str, instance: &str) {
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Namespace => kix_yaml::emit::write_scalar_string(out, namespace),
                Piece::Instance => kix_yaml::emit::write_scalar_string(out, instance),
            }
        }
    }
}

/// XXH3-128 of the pieces, each text with its length, so no two lists of pieces give one byte stream.
fn digest(pieces: &[Piece]) -> u128 {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    for piece in pieces {
        match piece {
            Piece::Text(text) => {
                hasher.update(b"t");
                hasher.update(&(text.len() as u64).to_le_bytes());
                hasher.update(text.as_bytes());
            }
            Piece::Namespace => hasher.update(b"n"),
            Piece::Instance => hasher.update(b"i"),
        }
    }
    hasher.digest128()
}
