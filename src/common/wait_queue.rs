//! A first-come, first-served queue whose entries can also leave from the middle
//! (a waiter that times out or disconnects).

use std::collections::VecDeque;

/// FIFO of waiters, each tagged with a unique id for removal.
#[derive(Debug)]
pub struct WaitQueue<W> {
    entries: VecDeque<(u64, W)>,
    next_id: u64,
}

impl<W> Default for WaitQueue<W> {
    fn default() -> Self {
        WaitQueue {
            entries: VecDeque::new(),
            next_id: 0,
        }
    }
}

impl<W> WaitQueue<W> {
    /// Appends a waiter and returns its id.
    pub fn push(&mut self, waiter: W) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.entries.push_back((id, waiter));
        id
    }

    /// Takes the oldest waiter.
    pub fn pop_front(&mut self) -> Option<W> {
        self.entries.pop_front().map(|(_, w)| w)
    }

    /// The oldest waiter, left in place.
    pub fn front(&self) -> Option<&W> {
        self.entries.front().map(|(_, w)| w)
    }

    /// Puts a waiter back at the head (a hand-off that could not happen yet).
    pub fn push_front(&mut self, waiter: W) {
        let id = self.next_id;
        self.next_id += 1;
        self.entries.push_front((id, waiter));
    }

    /// Removes the first waiter matching `pred`, wherever it stands.
    pub fn remove_where(&mut self, pred: impl Fn(&W) -> bool) -> Option<W> {
        let at = self.entries.iter().position(|(_, w)| pred(w))?;
        self.entries.remove(at).map(|(_, w)| w)
    }

    /// Removes every waiter matching `pred`, in arrival order, in one pass;
    /// the others keep their order.
    pub fn take_where(&mut self, mut pred: impl FnMut(&W) -> bool) -> Vec<W> {
        let mut taken = Vec::new();
        let mut kept = VecDeque::with_capacity(self.entries.len());
        for (id, w) in self.entries.drain(..) {
            if pred(&w) {
                taken.push(w);
            } else {
                kept.push_back((id, w));
            }
        }
        self.entries = kept;
        taken
    }

    /// Number of waiters.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nobody waits.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serves_in_arrival_order() {
        let mut q = WaitQueue::default();
        for i in 0..10 {
            q.push(i);
        }
        let served: Vec<i32> = std::iter::from_fn(|| q.pop_front()).collect();
        assert_eq!(served, (0..10).collect::<Vec<_>>());
        assert!(q.is_empty());
    }

    #[test]
    fn leaving_from_the_middle_keeps_order() {
        let mut q = WaitQueue::default();
        for i in 0..5 {
            q.push(i);
        }
        assert_eq!(q.remove_where(|w| *w == 2), Some(2));
        assert_eq!(q.remove_where(|w| *w == 2), None);
        assert_eq!(q.len(), 4);
        assert_eq!(q.take_where(|w| *w % 2 == 1), vec![1, 3]);
        q.push_front(9);
        let served: Vec<i32> = std::iter::from_fn(|| q.pop_front()).collect();
        assert_eq!(served, vec![9, 0, 4]);
    }
}
