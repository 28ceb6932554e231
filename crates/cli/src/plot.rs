//! The sweep's chart (plotters): the first varied key along x, a metric up, one series per
//! path and combination of the other varied keys, as SVG or PNG. Text is laid out with a
//! system TrueType font (no font is embedded in the binary).

use crate::sweep::metric_value;
use plotters::coord::Shift;
use plotters::prelude::*;
use rdmalab::report::Report;
use std::path::Path;

/// Fonts the chart may use, first found wins.
const FONTS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
];

/// The series of a sweep: (label, points sorted by x).
pub type Series = Vec<(String, Vec<(f64, f64)>)>;

/// Groups the reports into series of `metric` against the first axis.
pub fn series(
    axes: &[crate::sweep::Axis],
    reports: &[(Vec<String>, Report)],
    metric: &str,
) -> (Series, bool) {
    let numeric = reports.iter().all(|(v, _)| v[0].parse::<f64>().is_ok());
    let first: Vec<&String> = axes[0].values.iter().collect();
    let mut out: Series = Vec::new();
    for path in ["tcp", "rdma"] {
        for (values, r) in reports {
            let rest: Vec<String> = axes
                .iter()
                .zip(values)
                .skip(1)
                .map(|(a, v)| format!("{}={v}", a.key))
                .collect();
            let label = if rest.is_empty() {
                path.to_uppercase()
            } else {
                format!("{} {}", path.to_uppercase(), rest.join(" "))
            };
            let Some(y) = metric_value(r, path, metric) else {
                continue;
            };
            let x = if numeric {
                values[0].parse::<f64>().unwrap_or(0.0)
            } else {
                first.iter().position(|v| **v == values[0]).unwrap_or(0) as f64
            };
            match out.iter_mut().find(|(l, _)| *l == label) {
                Some((_, pts)) => pts.push((x, y)),
                None => out.push((label, vec![(x, y)])),
            }
        }
    }
    for (_, pts) in &mut out {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    (out, numeric)
}

/// Draws the chart to `path` (`.svg` or `.png`).
pub fn draw(
    path: &Path,
    title: &str,
    axes: &[crate::sweep::Axis],
    reports: &[(Vec<String>, Report)],
    metric: &str,
) -> anyhow::Result<()> {
    let (series, numeric) = series(axes, reports, metric);
    let size = (960, 560);
    // Text is laid out with a system TrueType font (plotters' pure-Rust glyph path), for the
    // SVG's label widths as for the PNG's pixels.
    let font = FONTS
        .iter()
        .find_map(|f| std::fs::read(f).ok())
        .ok_or_else(|| {
            anyhow::anyhow!(
                "the chart needs a TrueType font ({}); install fonts-dejavu-core",
                FONTS.join(", ")
            )
        })?;
    plotters::style::register_font(
        "sans-serif",
        FontStyle::Normal,
        Box::leak(font.into_boxed_slice()),
    )
    .map_err(|_| anyhow::anyhow!("the font could not be loaded"))?;
    // Through rdmalab::output: a failed or interrupted draw leaves no cut-off chart.
    let out = rdmalab::output::Output::create(path)?;
    if path.extension().is_some_and(|e| e == "png") {
        let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
        {
            let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
            chart(&root, title, &axes[0], &series, numeric, metric)?;
            root.present()?;
        }
        use image::ImageEncoder as _;
        let mut w = out.writer()?;
        image::codecs::png::PngEncoder::new(&mut w)
            .write_image(&rgb, size.0, size.1, image::ColorType::Rgb8)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        std::io::Write::flush(&mut w)?;
    } else {
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
            chart(&root, title, &axes[0], &series, numeric, metric)?;
            root.present()?;
        }
        let mut out = out;
        out.write_all(svg.as_bytes())?;
        return Ok(out.commit()?);
    }
    Ok(out.commit()?)
}

fn chart<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_axis: &crate::sweep::Axis,
    series: &Series,
    numeric: bool,
    metric: &str,
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let xs = series.iter().flat_map(|(_, p)| p.iter().map(|q| q.0));
    let (x0, x1) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let (x0, x1) = if x0 > x1 {
        (0.0, 1.0)
    } else if x0 == x1 {
        (x0 - 0.5, x1 + 0.5)
    } else {
        (x0, x1)
    };
    let y1 = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.1))
        .fold(0.0f64, f64::max);
    let y1 = if y1 > 0.0 { y1 * 1.1 } else { 1.0 };
    let mut c = ChartBuilder::on(root)
        .caption(
            format!("{title}: {metric} vs {}", x_axis.key),
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, 0.0..y1)?;
    let labels = x_axis.values.clone();
    c.configure_mesh()
        .x_desc(&x_axis.key)
        .y_desc(metric)
        .x_label_formatter(&|x: &f64| {
            if numeric {
                // Six significant decimals, no float noise (0.018, not 0.018000000000002).
                let t = format!("{x:.6}");
                t.trim_end_matches('0').trim_end_matches('.').to_string()
            } else {
                labels.get(x.round() as usize).cloned().unwrap_or_default()
            }
        })
        .draw()?;
    for (i, (label, pts)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        c.draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
            .label(label.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        c.draw_series(pts.iter().map(|p| Circle::new(*p, 4, color.filled())))?;
    }
    c.configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    Ok(())
}
