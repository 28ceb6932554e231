//! Driving the world's events: [`World::run_until`] and [`World::run_until_cond`] hand the
//! engine the world's state (the [`Model`]) and its scheduler as two fields borrowed apart, so
//! nothing is lent out and back, and a run's stop condition sees the whole world with its clock
//! at the event just handled.

use super::{Event, HostEvent, State, World, WorldError};
use engine::{Budget, Model, RunStats, Scheduler, Simulation, Step, run_simulation, run_until};
use units::SimTime;

impl World {
    /// Runs until `stop` holds after an event, or until simulated time `until`, or until
    /// nothing is left to do: an application waiting for its socket or CQ without stepping
    /// event by event. `stop` sees the world between events, `now()` being the time of the
    /// event just handled.
    pub fn run_until_cond(
        &mut self,
        until: SimTime,
        budget: &Budget,
        mut stop: impl FnMut(&World) -> bool,
    ) -> Result<RunStats, WorldError> {
        // Already true: run nothing (the next event may be far in the future, and running it
        // would move the clock past the moment the caller is waiting for).
        if stop(self) {
            return Ok(RunStats {
                events: 0,
                end_time: self.sched.now(),
                stopped_by_model: true,
                wall: std::time::Duration::ZERO,
            });
        }
        if let Some(e) = self.deferred_error.take() {
            return Err(e);
        }
        let (budget, from_total) = self.within_total(budget)?;
        let r = if self.is_partitioned() {
            self.run_parts_until_cond(until, &budget, &mut stop)
        } else {
            run_simulation(&mut Until { world: self, stop }, &budget, until)
        };
        Ok(self.count_total(r, from_total)?)
    }

    /// Runs until simulated time `until` (or until nothing is left to do).
    pub fn run_until(&mut self, until: SimTime, budget: &Budget) -> Result<RunStats, WorldError> {
        if let Some(e) = self.deferred_error.take() {
            return Err(e);
        }
        let (budget, from_total) = self.within_total(budget)?;
        let r = if self.is_partitioned() {
            self.run_parts_until(until, &budget)
        } else {
            run_until(&mut self.state, &mut self.sched, &budget, until)
        };
        let r = self.count_total(r, from_total);
        // Leave the clock at `until` so that later calls happen then.
        if self.sched.now() < until && until != SimTime::MAX {
            self.advance_clocks(until);
        }
        Ok(r?)
    }
}

/// A world with the condition that ends its run ([`World::run_until_cond`]).
struct Until<'a, F: FnMut(&World) -> bool> {
    world: &'a mut World,
    stop: F,
}

impl<F: FnMut(&World) -> bool> Simulation for Until<'_, F> {
    type Model = State;
    #[inline]
    fn parts(&mut self) -> (&mut State, &mut Scheduler<Event>) {
        (&mut self.world.state, &mut self.world.sched)
    }
    /// The stop condition, with the whole world (its clock included) in view.
    #[inline]
    fn done(&mut self) -> bool {
        (self.stop)(self.world)
    }
}

/// The world's state is the model the engine drives; its scheduler comes beside it.
impl Model for State {
    type Event = Event;
    /// Counted from lengths and capacities ([`World::held_bytes`]): the trace records the
    /// observers keep, the fabric's packets in flight and the bytes of every host's buffers.
    fn held_bytes(&self) -> u64 {
        let buffers: u64 = self
            .hosts
            .iter()
            .map(|h| h.verbs.memory().held_bytes())
            .sum();
        self.tracer.held_bytes() + self.fabric.held_bytes() + buffers
    }
    /// The fabric's lines for its events, and the held packet a received frame's `RxIn`
    /// takes: on a large fabric each is a cache miss otherwise.
    fn prefetch(&self, next: &Event) {
        let fabric = &self.fabric;
        match next {
            Event::Fabric(fe) => fabric.prefetch_event_near(fe),
            // The payload was asked for an event earlier: its data handle names the pool
            // entry that the delivery reads next (last touched when the frame was sent).
            Event::Host(HostEvent::RxIn { slot, .. }) => {
                let pkt = fabric::PacketHandle::from_index(*slot);
                fabric.prefetch_held(pkt);
                if let Some(d) = fabric.held_data_hint(pkt) {
                    self.pool.prefetch(engine::Handle::from_index(d));
                }
            }
            Event::Host(_) => {}
        }
    }
    fn prefetch_ahead(&self, after_next: &Event) {
        let fabric = &self.fabric;
        match after_next {
            Event::Fabric(fe) => fabric.prefetch_event(fe),
            Event::Host(HostEvent::RxIn { slot, .. }) => {
                fabric.prefetch_held(fabric::PacketHandle::from_index(*slot))
            }
            Event::Host(_) => {}
        }
    }
    #[inline]
    fn handle(&mut self, ev: Event, sched: &mut Scheduler<Event>) -> Step {
        State::handle(self, ev, sched);
        Step::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::RcOptions;
    use fabric::{FabricConfig, LinkConfig, Topology};
    use units::{Bandwidth, SimDuration};

    /// Two hosts through a switch, an RC pair connected, and `writes` 64 KiB WRITEs posted
    /// from host 0 to host 1 (signaled).
    fn writing(writes: usize) -> (World, crate::world::Endpoint) {
        let mut topo = Topology::new("pair");
        let sw = topo.add_switch("sw");
        for name in ["h0", "h1"] {
            let h = topo.add_host(name);
            topo.connect(h, sw, LinkConfig::new(Bandwidth::gbps(100), 3));
        }
        let mut w = World::new(
            &topo,
            FabricConfig::default(),
            Default::default(),
            Default::default(),
        )
        .unwrap();
        let c = w
            .connect_rc_buffered(0, 1, &RcOptions::default(), 1 << 16)
            .unwrap();
        let a = c.ends.0;
        w.post_writes(&c, &vec![1 << 16; writes], true).unwrap();
        (w, a)
    }

    /// A stop condition sees the clock at the event just handled. With the scheduler lent
    /// out during the run (as before issue 22 item 7), `now()` inside the condition read the
    /// spare left in its place: a condition on the clock never held, and the run went on to
    /// the last event.
    #[test]
    fn a_stop_condition_reads_the_running_clock() {
        let (mut w, a) = writing(8);
        let start = w.now();
        let at = start + SimDuration::from_us(10);
        let mut seen = Vec::new();
        let st = w
            .run_until_cond(SimTime::MAX, &Budget::default(), |w| {
                seen.push(w.now());
                w.now() >= at
            })
            .unwrap();
        assert!(
            st.stopped_by_model,
            "the condition on the clock ended the run"
        );
        assert_eq!(seen.first(), Some(&start), "checked once before any event");
        assert!(
            seen.windows(2).all(|p| p[0] <= p[1]),
            "the clock never goes back"
        );
        assert!(seen[1..].iter().all(|t| *t > start), "{:?}", &seen[..4]);
        assert_eq!(seen.last(), Some(&st.end_time));
        assert_eq!(w.now(), st.end_time);
        assert!(st.end_time >= at && seen[seen.len() - 2] < at);
        // Eight 64 KiB WRITEs at 100 Gbit/s take about 42 µs: the run stopped well before its
        // last completion.
        assert!(w.pending_events() > 0);
        assert!(w.host(0).verbs.cq(a.cq).is_none_or(|c| c.len() < 8));
    }

    /// The same run stopped on the clock, then run to the end of that instant, is where
    /// `run_until` takes it: the two drive the one scheduler alike.
    #[test]
    fn stopping_on_the_clock_matches_running_until_it() {
        let (mut cond, _) = writing(4);
        let (mut plain, _) = writing(4);
        let at = cond.now() + SimDuration::from_us(7);
        let st = cond
            .run_until_cond(SimTime::MAX, &Budget::default(), |w| w.now() >= at)
            .unwrap();
        cond.run_until(st.end_time, &Budget::default()).unwrap();
        plain.run_until(st.end_time, &Budget::default()).unwrap();
        assert_eq!(cond.now(), plain.now());
        assert_eq!(cond.events_processed(), plain.events_processed());
        assert_eq!(cond.pending_events(), plain.pending_events());
    }
}
