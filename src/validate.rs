//! kix's own Kubernetes validation of emitted objects (being built: issue 4).
