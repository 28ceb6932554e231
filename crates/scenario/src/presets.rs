//! The six lesson presets of DESIGN.md §3.8, embedded from `scenarios/presets/`.
//!
//! Preset `lessonN` is scenario N (①–⑥) of DESIGN.md §3.8. The course lessons they serve:
//! ① lessons 1–2, ② lesson 3, ③ and ④ lesson 4, ⑤ lesson 5, ⑥ lesson 6. `lesson5b` (⑤b)
//! is lesson 5's experiment with real bursty cross traffic instead of drawn drops. Each file's
//! header says which lesson and which hands-on step it reproduces.

use crate::parse::{ScenarioError, parse};
use crate::plan::Plan;

/// One embedded preset.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub struct Preset {
    /// The name a user types (`lesson3`).
    pub name: &'static str,
    /// The scenario number, 1..=6 (①–⑥).
    pub number: u8,
    /// What follows the number for a variant (`"b"` in ⑤b), else empty.
    pub variant: &'static str,
    /// A one-line title.
    pub title: &'static str,
    /// The scenario file.
    pub toml: &'static str,
}

impl Preset {
    /// Parses the preset.
    pub fn plan(&self) -> Result<Plan, ScenarioError> {
        parse(self.toml)
    }
}

const PRESETS: &[Preset] = &[
    Preset {
        name: "lesson1",
        number: 1,
        variant: "",
        title: "① baseline: 4 KB message, TCP vs RDMA WRITE, 100 Gb/s, one switch, no loss (lessons 1–2)",
        toml: include_str!("../../../scenarios/presets/lesson1.toml"),
    },
    Preset {
        name: "lesson2",
        number: 2,
        variant: "",
        title: "② SEND/RECV vs WRITE: the remote CPU takes part (lesson 3)",
        toml: include_str!("../../../scenarios/presets/lesson2.toml"),
    },
    Preset {
        name: "lesson3",
        number: 3,
        variant: "",
        title: "③ memory not registered: post_send returns 0, the WR completes with LOC_PROT_ERR; TCP sends (lesson 4)",
        toml: include_str!("../../../scenarios/presets/lesson3.toml"),
    },
    Preset {
        name: "lesson4",
        number: 4,
        variant: "",
        title: "④ QP left in RTR: mlx5 accepts the post and nothing happens, rxe returns EINVAL (lesson 4)",
        toml: include_str!("../../../scenarios/presets/lesson4.toml"),
    },
    Preset {
        name: "lesson5",
        number: 5,
        variant: "",
        title: "⑤ 1% congestion drops, lossless off; `--set lossless.enabled=true` brings retention back (lesson 5)",
        toml: include_str!("../../../scenarios/presets/lesson5.toml"),
    },
    Preset {
        name: "lesson5b",
        number: 5,
        variant: "b",
        title: "⑤b real bursty cross traffic instead of drawn drops; `--set lossless.enabled=true` for PFC (lesson 5)",
        toml: include_str!("../../../scenarios/presets/lesson5b.toml"),
    },
    Preset {
        name: "lesson6",
        number: 6,
        variant: "",
        title: "⑥ 1 MB messages; `--set workload.message_bytes=4096` for the 4 KB run (lesson 6)",
        toml: include_str!("../../../scenarios/presets/lesson6.toml"),
    },
];

/// Every preset, ① to ⑥ (⑤b after ⑤).
pub fn presets() -> &'static [Preset] {
    PRESETS
}

/// The preset named `lesson3`, `3` or `③` (`lesson5b`, `5b` or `⑤b` for a variant;
/// case-insensitive, surrounding spaces ignored).
pub fn preset(name: &str) -> Option<&'static Preset> {
    let n = name.trim().to_lowercase();
    const CIRCLED: [&str; 6] = ["①", "②", "③", "④", "⑤", "⑥"];
    PRESETS.iter().find(|p| {
        let circled = CIRCLED[usize::from(p.number) - 1];
        n == p.name
            || n == format!("{}{}", p.number, p.variant)
            || n == format!("{circled}{}", p.variant)
    })
}

/// The names [`preset`] accepts, for error messages.
pub fn preset_names() -> String {
    let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
    format!("{} (or 1..=6, 5b)", names.join(", "))
}
