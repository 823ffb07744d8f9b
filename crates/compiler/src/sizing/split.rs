//! The arithmetic of replicas over failure domains: how an even spread (maxSkew 1) splits R pods over
//! D domains, and what the worst single domain loss takes. Both `kix capacity` and the sizing findings
//! use it, so they cannot disagree.

/// R pods over D domains as evenly as a maxSkew of 1 allows, heaviest first: `4 over 3` is `[2, 1, 1]`.
pub fn even_split(replicas: usize, domains: usize) -> Vec<usize> {
    if domains == 0 {
        return Vec::new();
    }
    (0..domains).map(|i| replicas / domains + usize::from(i < replicas % domains)).collect()
}

/// The pods the worst single domain loss takes: the heaviest domain's, ceil(R/D).
pub fn worst_zone_loss(replicas: usize, domains: usize) -> usize {
    even_split(replicas, domains).first().copied().unwrap_or(replicas)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_and_losses_table() {
        // (replicas, zones, split, worst loss): the design notes' cases, 6 over 3 leaving 4.
        let cases: [(usize, usize, &[usize], usize); 6] = [
            (6, 3, &[2, 2, 2], 2),
            (4, 3, &[2, 1, 1], 2),
            (3, 3, &[1, 1, 1], 1),
            (2, 3, &[1, 1, 0], 1),
            (5, 2, &[3, 2], 3),
            (1, 1, &[1], 1),
        ];
        for (replicas, zones, split, lost) in cases {
            assert_eq!(even_split(replicas, zones), split, "{replicas} over {zones}");
            assert_eq!(worst_zone_loss(replicas, zones), lost, "{replicas} over {zones}");
        }
    }
}
