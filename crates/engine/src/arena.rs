//! A slab of values addressed by small `Copy` handles.
//!
//! Packets in flight live here and travel through queues and events as a 4-byte [`Handle`].
//! Freed slots go on a free list and are reused first, so once a run has reached its peak
//! number of packets in flight, inserting and removing allocates nothing.
//!
//! Handles are not generation-checked in release builds: each user owns every value's handle
//! in exactly one place at a time (the fabric a packet's descriptor and body in a queue, a link
//! in flight or an event; the world a frame leaving a NIC or a send completion in its one
//! event), and a debug build checks that a handle points at a live slot.

use core::fmt;
use core::marker::PhantomData;

/// A handle to a value in an [`Arena<T>`].
pub struct Handle<T> {
    index: u32,
    _marker: PhantomData<fn() -> T>,
}

impl<T> Handle<T> {
    /// The slot index, e.g. for a trace record or an event.
    pub const fn index(self) -> u32 {
        self.index
    }
    /// The handle for slot `index` (one that [`index`](Self::index) returned), so that a
    /// handle can travel inside a plain event value.
    pub const fn from_index(index: u32) -> Self {
        Handle {
            index,
            _marker: PhantomData,
        }
    }
}
impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Handle<T> {}
impl<T> PartialEq for Handle<T> {
    fn eq(&self, o: &Self) -> bool {
        self.index == o.index
    }
}
impl<T> Eq for Handle<T> {}
impl<T> fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.index)
    }
}

/// A growable slab with a free list.
///
/// A slot is an `Option<T>`, so a value with a niche (a `bool`, an enum) costs no tag byte and
/// a 64-byte value keeps to one cache line; freed indices wait on a stack and are reused
/// last-freed first, while their line is likely still in cache.
pub struct Arena<T> {
    slots: Vec<Option<T>>,
    free: Vec<u32>,
    live: usize,
    peak: usize,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Arena<T> {
    /// An empty arena.
    pub fn new() -> Self {
        Self::with_capacity(0)
    }
    /// An empty arena with room for `n` values before it allocates.
    pub fn with_capacity(n: usize) -> Self {
        Arena {
            slots: Vec::with_capacity(n),
            free: Vec::new(),
            live: 0,
            peak: 0,
        }
    }
    /// Stores `value` and returns its handle, reusing a freed slot when there is one.
    pub fn insert(&mut self, value: T) -> Handle<T> {
        self.live += 1;
        self.peak = self.peak.max(self.live);
        let index = match self.free.pop() {
            Some(index) => {
                let slot = &mut self.slots[index as usize];
                debug_assert!(slot.is_none(), "free list points at a live slot");
                *slot = Some(value);
                index
            }
            None => {
                let index =
                    u32::try_from(self.slots.len()).expect("more than 4 billion packets in flight");
                self.slots.push(Some(value));
                index
            }
        };
        Handle {
            index,
            _marker: PhantomData,
        }
    }
    /// Removes and returns the value; its slot is reused by a later insert.
    pub fn remove(&mut self, h: Handle<T>) -> T {
        let Some(v) = self.slots[h.index as usize].take() else {
            panic!("arena handle {h:?} removed twice");
        };
        self.free.push(h.index);
        self.live -= 1;
        v
    }
    /// The value behind `h`.
    pub fn get(&self, h: Handle<T>) -> &T {
        match &self.slots[h.index as usize] {
            Some(v) => v,
            None => panic!("arena handle {h:?} used after removal"),
        }
    }
    /// Hints the CPU to load the slot of `h` (see [`prefetch`](fn@crate::prefetch)); nothing if `h` is out
    /// of range.
    #[inline]
    pub fn prefetch(&self, h: Handle<T>) {
        if let Some(s) = self.slots.get(h.index as usize) {
            crate::prefetch(s);
        }
    }
    /// The value behind `h`, or `None` if its slot is free or out of range.
    pub fn try_get(&self, h: Handle<T>) -> Option<&T> {
        self.slots.get(h.index as usize)?.as_ref()
    }
    /// The value behind `h`, mutably.
    pub fn get_mut(&mut self, h: Handle<T>) -> &mut T {
        match &mut self.slots[h.index as usize] {
            Some(v) => v,
            None => panic!("arena handle {h:?} used after removal"),
        }
    }
    /// Values currently stored.
    pub fn len(&self) -> usize {
        self.live
    }
    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }
    /// The most values ever stored at once.
    pub fn peak(&self) -> usize {
        self.peak
    }
    /// Slots allocated (live or free): growth stops once the peak is reached.
    pub fn capacity_slots(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuses_freed_slots() {
        let mut a = Arena::new();
        let x = a.insert(1u64);
        let y = a.insert(2u64);
        assert_eq!(*a.get(y), 2);
        assert_eq!(a.remove(x), 1);
        let z = a.insert(3u64);
        assert_eq!(z.index(), x.index(), "freed slot reused");
        assert_eq!(a.len(), 2);
        assert_eq!(a.capacity_slots(), 2);
        assert_eq!(a.peak(), 2);
        *a.get_mut(z) += 10;
        assert_eq!(*a.get(z), 13);
    }

    #[test]
    fn steady_state_does_not_grow() {
        let mut a = Arena::new();
        let mut hs: Vec<_> = (0..100u32).map(|i| a.insert(i)).collect();
        for round in 0..1000u32 {
            let h = hs.remove((round % 100) as usize);
            a.remove(h);
            hs.push(a.insert(round));
        }
        assert_eq!(a.capacity_slots(), 100);
    }

    #[test]
    fn a_value_with_a_niche_costs_no_tag() {
        assert_eq!(
            core::mem::size_of::<Option<(u64, bool)>>(),
            core::mem::size_of::<(u64, bool)>()
        );
    }

    #[test]
    #[should_panic(expected = "removed twice")]
    fn double_remove_panics() {
        let mut a = Arena::new();
        let x = a.insert(1u8);
        a.remove(x);
        a.remove(x);
    }
}
