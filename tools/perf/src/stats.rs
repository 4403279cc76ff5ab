//! Summary statistics over repetitions.

/// Minimum, median and maximum of `values` (`None` when empty). The median of an even
/// count is the mean of the two middle values.
pub fn min_median_max(values: &[f64]) -> Option<(f64, f64, f64)> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    };
    Some((sorted[0], median, sorted[n - 1]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_and_even_medians() {
        assert_eq!(min_median_max(&[3.0, 1.0, 2.0]), Some((1.0, 2.0, 3.0)));
        assert_eq!(min_median_max(&[4.0, 1.0, 3.0, 2.0]), Some((1.0, 2.5, 4.0)));
        assert_eq!(min_median_max(&[7.0]), Some((7.0, 7.0, 7.0)));
        assert_eq!(min_median_max(&[]), None);
    }
}
