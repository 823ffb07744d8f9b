//! The committed JSON Schemas (schemas/) are what `kix schema` generates from the loader's types, every
//! property has a description, and the shipped examples point editors at them.

use crate::support::{SHIPPED_EXAMPLES, Test, assert_golden, repo_path};

#[test]
fn committed_schemas_are_current_and_describe_every_field() {
    for (file, golden) in [("cluster", "schemas/cluster.schema.json"), ("package", "schemas/package.schema.json")] {
        let run = Test::in_repo().args(["schema", file]).run().status(0);
        assert_golden(golden, &run.stdout);
        let schema: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        let mut undescribed = Vec::new();
        let mut objects = vec![("".to_string(), &schema)];
        objects.extend(schema["$defs"].as_object().unwrap().iter().map(|(name, def)| (name.clone(), def)));
        for (owner, object) in objects {
            for (name, property) in object["properties"].as_object().into_iter().flatten() {
                if property.get("description").is_none() {
                    undescribed.push(format!("{file}: {owner}.{name}"));
                }
            }
        }
        assert!(undescribed.is_empty(), "properties without a description: {undescribed:?}");
        assert_eq!(schema["additionalProperties"], false, "unknown keys are errors, so the schema says so too");
    }
}

#[test]
fn the_shipped_examples_name_their_schema() {
    for file in SHIPPED_EXAMPLES.iter().filter(|f| f.ends_with(".toml")) {
        let text = std::fs::read_to_string(repo_path(file)).unwrap();
        let expected = if file.starts_with("clusters/") {
            "#:schema ../schemas/cluster.schema.json"
        } else {
            "#:schema ../../schemas/package.schema.json"
        };
        assert_eq!(text.lines().next(), Some(expected), "{file} should start with its schema line");
    }
}
