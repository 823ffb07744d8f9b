//! `serde::Serialize` for [`Value`]: null, booleans, numbers and strings as themselves, sequences as
//! sequences and mappings as maps (string keys become JSON object keys through serde_json).

use super::{Mapping, Number, Value};
use serde::ser::{Serialize, SerializeMap, Serializer};

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => serializer.serialize_unit(),
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::Number(n) => n.serialize(serializer),
            Value::String(s) => serializer.serialize_str(s),
            Value::Sequence(items) => serializer.collect_seq(items),
            Value::Mapping(map) => map.serialize(serializer),
        }
    }
}

impl Serialize for Number {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if let Some(u) = self.as_u64() {
            serializer.serialize_u64(u)
        } else if let Some(i) = self.as_i64() {
            serializer.serialize_i64(i)
        } else {
            serializer.serialize_f64(self.as_f64().unwrap_or(f64::NAN))
        }
    }
}

impl Serialize for Mapping {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (k, v) in self {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use crate::{Limits, parse_stream};

    #[test]
    fn serializes_to_json_in_document_order() {
        let text = "b: 1\na: [true, null, -2, 1.5, x]\nc: {d: '7'}\n";
        let value = parse_stream(text, &Limits::PACKAGE).remove(0).unwrap().value;
        assert_eq!(serde_json::to_string(&value).unwrap(), r#"{"b":1,"a":[true,null,-2,1.5,"x"],"c":{"d":"7"}}"#);
        let theirs: serde_yaml::Value = serde_yaml::from_str(text).unwrap();
        assert_eq!(serde_json::to_value(&value).unwrap(), serde_json::to_value(&theirs).unwrap());
    }
}
