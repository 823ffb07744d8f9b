//! The Argo CD Config Management Plugin (`argocd/plugin.yaml`), run as Argo CD's CMP server runs
//! it: the sidecar's build context from `scripts/argocd-sidecar.sh`, then the plugin's `init` and
//! `generate` commands exactly as written in that context's plugin.yaml, with the context's kix
//! first on PATH, the Application's source directory as working directory and the environment
//! Argo CD gives them (build variables `ARGOCD_APP_*`, `KUBE_VERSION`, and the Application's
//! plugin env prefixed `ARGOCD_ENV_`; Argo CD's operator manual, "Config Management Plugins",
//! "Using environment variables in your plugin"). Generate's stdout must be only Kubernetes
//! objects: here, exactly `kix build --stdout` of the named cluster.

use crate::support::*;
use std::path::Path;
use std::process::Command;

/// One of the plugin's commands (`spec.<phase>.command` followed by its `args`).
fn plugin_command(plugin: &serde_json::Value, phase: &str) -> Vec<String> {
    let spec = &plugin["spec"][phase];
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array().into_iter().flatten().map(|s| s.as_str().unwrap().to_string()).collect()
    };
    let mut command = strings(&spec["command"]);
    command.extend(strings(&spec["args"]));
    assert!(!command.is_empty(), "spec.{phase}.command is missing");
    command
}

/// Runs a plugin command as the CMP server does: in `app` with only the sidecar's PATH and Argo CD's
/// variables. Returns (status, stdout, stderr).
fn run_as_argocd(command: &[String], app: &Path, sidecar: &Path, env: &[(&str, &str)]) -> (i32, String, String) {
    let output = Command::new(&command[0])
        .args(&command[1..])
        .current_dir(app)
        .env_clear()
        .env("PATH", format!("{}:/usr/local/bin:/usr/bin:/bin", sidecar.display()))
        .env("ARGOCD_APP_NAME", "shop-prod")
        .env("ARGOCD_APP_NAMESPACE", "shop")
        .env("ARGOCD_APP_REVISION", "0123456789abcdef0123456789abcdef01234567")
        .env("ARGOCD_APP_SOURCE_REPO_URL", "https://git.example.com/platform/deploy.git")
        .env("ARGOCD_APP_SOURCE_PATH", ".")
        .env("ARGOCD_APP_SOURCE_TARGET_REVISION", "HEAD")
        .env("KUBE_VERSION", "1.33.0")
        .envs(env.iter().copied())
        .output()
        .expect("run the plugin command");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).expect("UTF-8 stdout"),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn argocd_plugin_generate_writes_only_the_clusters_yaml_as_argocd_runs_it() {
    // The sidecar's build context, from the script CI runs (given the binary under test).
    let scratch = tempfile::tempdir().unwrap();
    let context = scratch.path().join("sidecar");
    let script = Command::new(repo_path("scripts/argocd-sidecar.sh"))
        .arg("--binary")
        .arg(env!("CARGO_BIN_EXE_kix"))
        .arg(&context)
        .output()
        .expect("run scripts/argocd-sidecar.sh");
    assert!(script.status.success(), "argocd-sidecar.sh: {}", String::from_utf8_lossy(&script.stderr));
    // Everything the Dockerfile copies is in the context.
    let dockerfile = std::fs::read_to_string(context.join("Dockerfile")).unwrap();
    let copies: Vec<&str> = dockerfile
        .lines()
        .filter_map(|l| l.strip_prefix("COPY "))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(copies, ["kix", "plugin.yaml"], "{dockerfile}");
    for copied in copies {
        assert!(context.join(copied).is_file(), "the context lacks {copied}");
    }
    assert!(dockerfile.contains("USER 999"), "Argo CD runs the sidecar as user 999");

    let plugin = std::fs::read_to_string(context.join("plugin.yaml")).unwrap();
    let plugin = serde_json::to_value(&kix_yaml::from_str_all(&plugin).unwrap()[0]).unwrap();
    assert_eq!(plugin["apiVersion"], "argoproj.io/v1alpha1");
    assert_eq!(plugin["kind"], "ConfigManagementPlugin");
    assert_eq!(plugin["metadata"]["name"], "kix");
    let init = plugin_command(&plugin, "init");
    let generate = plugin_command(&plugin, "generate");

    // The Application's source directory: a kix root, as a repository checked out by the repo-server.
    let t = Test::new().examples();
    let app = t.root();
    let discover = plugin["spec"]["discover"]["fileName"].as_str().unwrap();
    assert_eq!(discover, "./clusters/*.toml");
    assert!(app.join("clusters/prod.toml").is_file(), "discovery matches a kix root");

    let cluster = [("ARGOCD_ENV_KIX_CLUSTER", "prod")];
    let (status, _, stderr) = run_as_argocd(&init, app, &context, &cluster);
    assert_eq!(status, 0, "init failed: {stderr}");
    assert!(stderr.contains("cluster prod, application shop-prod"), "{stderr}");

    let (status, stdout, stderr) = run_as_argocd(&generate, app, &context, &cluster);
    assert_eq!(status, 0, "generate failed: {stderr}");
    // Only Kubernetes objects on stdout: every document is an object with apiVersion, kind and a name ...
    let documents = kix_yaml::from_str_all(&stdout).unwrap_or_else(|e| panic!("generate's stdout is not YAML: {e}"));
    assert!(documents.len() > 10, "expected prod's objects, got {} documents", documents.len());
    for document in &documents {
        let object = serde_json::to_value(document).unwrap();
        assert!(
            object["apiVersion"].is_string() && object["kind"].is_string() && object["metadata"]["name"].is_string(),
            "not a Kubernetes object on generate's stdout: {object}"
        );
    }
    // ... and exactly what `kix build --stdout` compiles for that cluster.
    let built = t.clone().args(["build", "--stdout", "--cluster", "prod"]).run().status(0);
    assert_eq!(stdout, built.stdout);
    let (_, staging, _) = run_as_argocd(&generate, app, &context, &[("ARGOCD_ENV_KIX_CLUSTER", "staging")]);
    assert_ne!(staging, stdout, "the cluster comes from ARGOCD_ENV_KIX_CLUSTER");

    // From a source directory below the root (Application path `apps/shop`), kix finds the root upward.
    std::fs::create_dir_all(app.join("apps/shop")).unwrap();
    let (status, below, stderr) = run_as_argocd(&generate, &app.join("apps/shop"), &context, &cluster);
    assert_eq!((status, below.as_str()), (0, stdout.as_str()), "{stderr}");

    // Without the Application's KIX_CLUSTER, or naming no cluster, both fail with nothing on stdout.
    for (env, says) in [(&[][..], "KIX_CLUSTER"), (&[("ARGOCD_ENV_KIX_CLUSTER", "nope")][..], "nope")] {
        for command in [&init, &generate] {
            let (status, stdout, stderr) = run_as_argocd(command, app, &context, env);
            if command == &init && !env.is_empty() {
                continue; // init only logs; the unknown cluster is generate's to report
            }
            assert_ne!(status, 0, "{command:?} with {env:?} succeeded");
            assert_eq!(stdout, "", "{command:?} with {env:?} wrote to stdout");
            assert!(stderr.contains(says), "{command:?} with {env:?}: {stderr}");
        }
    }
}
