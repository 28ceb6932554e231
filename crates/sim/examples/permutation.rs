//! Times the fat-tree permutation: `cargo run --release -p rdmalab --example permutation -- K`.
fn main() {
    let k: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(4);
    let text = std::fs::read_to_string("scenarios/fattree-permutation-1024.toml").unwrap();
    let plan = scenario::parse_with(&text, &[&format!("topology.k={k}")]).unwrap();
    let r = rdmalab::permutation::run_plan(&plan, None).unwrap();
    print!("{}", r.text(&format!("k={k}")));
}
