//! A result of a results file as something to plot: the adapter between
//! yamba-results and yamba-plot, which reads no results file.

use yamba_plot::{Curve, Source};
use yamba_results::{BenchResult, Series};

/// A result's observations (in its unit) and its curve, if it has one,
/// titled with its key and status.
pub fn source(r: &BenchResult) -> Source {
    Source {
        title: format!("{} ({})", r.key(), r.status.as_str()),
        unit: Some(r.unit),
        values: r.observations.clone(),
        curve: r.series.as_ref().map(curve),
    }
}

/// A results file's series as a curve to draw.
pub fn curve(s: &Series) -> Curve {
    Curve {
        x_label: s.x_label.clone(),
        x_unit: s.x_unit.clone(),
        y_label: s.y_label.clone(),
        y_unit: s.y_unit.clone(),
        log_x: s.log_x,
        log_y: s.log_y,
        points: s.points.clone(),
    }
}
