//! The history as a doubly linked list of call and return entries sorted by
//! time, with Porcupine's lift/unlift: linearizing an operation removes its
//! call and return from the list; backtracking puts them back.
//!
//! Node 0 is the head sentinel; operation `i` owns node `2i+1` (its call)
//! and node `2i+2` (its return).

use super::operation::LinOp;

pub(crate) const NIL: u32 = u32::MAX;

pub(crate) struct Entries {
    next: Vec<u32>,
    prev: Vec<u32>,
}

pub(crate) fn call_node(op: usize) -> u32 {
    (2 * op + 1) as u32
}

pub(crate) fn op_of(node: u32) -> usize {
    (node as usize - 1) / 2
}

pub(crate) fn is_call(node: u32) -> bool {
    node % 2 == 1
}

impl Entries {
    /// Orders entries by time. On a tie a call comes before a return, so
    /// operations whose intervals touch count as concurrent. Returns of
    /// indeterminate operations come last (at +infinity), by index.
    pub(crate) fn new<I, O>(ops: &[LinOp<I, O>]) -> Self {
        let mut order: Vec<(bool, u64, u8, u32)> = Vec::with_capacity(ops.len() * 2);
        for (i, op) in ops.iter().enumerate() {
            order.push((false, op.call, 0, call_node(i)));
            match op.ret {
                Some(t) if op.output.is_some() => order.push((false, t, 1, call_node(i) + 1)),
                _ => order.push((true, 0, 1, call_node(i) + 1)),
            }
        }
        order.sort_unstable();
        let n = ops.len() * 2 + 1;
        let mut next = vec![NIL; n];
        let mut prev = vec![NIL; n];
        let mut last = 0u32;
        for &(_, _, _, node) in &order {
            next[last as usize] = node;
            prev[node as usize] = last;
            last = node;
        }
        Entries { next, prev }
    }

    pub(crate) fn first(&self) -> u32 {
        self.next[0]
    }

    pub(crate) fn next(&self, node: u32) -> u32 {
        self.next[node as usize]
    }

    fn unlink(&mut self, node: u32) {
        let (p, n) = (self.prev[node as usize], self.next[node as usize]);
        self.next[p as usize] = n;
        if n != NIL {
            self.prev[n as usize] = p;
        }
    }

    fn relink(&mut self, node: u32) {
        let (p, n) = (self.prev[node as usize], self.next[node as usize]);
        self.next[p as usize] = node;
        if n != NIL {
            self.prev[n as usize] = node;
        }
    }

    /// Removes a call and its return from the list.
    pub(crate) fn lift(&mut self, call: u32) {
        self.unlink(call);
        self.unlink(call + 1);
    }

    /// Undoes the matching `lift` (lifts and unlifts nest like a stack).
    pub(crate) fn unlift(&mut self, call: u32) {
        self.relink(call + 1);
        self.relink(call);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(call: u64, ret: Option<u64>) -> LinOp<(), ()> {
        LinOp {
            id: 0,
            client: 0,
            call,
            ret,
            input: (),
            output: ret.map(|_| ()),
        }
    }

    fn walk(e: &Entries) -> Vec<u32> {
        let mut v = vec![];
        let mut n = e.first();
        while n != NIL {
            v.push(n);
            n = e.next(n);
        }
        v
    }

    #[test]
    fn orders_calls_before_returns_on_ties_and_indeterminate_last() {
        // op0 [0,5], op1 [5,9], op2 [1, never]
        let e = Entries::new(&[op(0, Some(5)), op(5, Some(9)), op(1, None)]);
        assert_eq!(walk(&e), vec![1, 5, 3, 2, 4, 6]);
    }

    #[test]
    fn lift_and_unlift_nest() {
        let mut e = Entries::new(&[op(0, Some(5)), op(1, Some(6)), op(2, Some(7))]);
        let all = walk(&e);
        e.lift(3);
        assert_eq!(walk(&e), vec![1, 5, 2, 6]);
        e.lift(1);
        assert_eq!(walk(&e), vec![5, 6]);
        e.unlift(1);
        e.unlift(3);
        assert_eq!(walk(&e), all);
    }
}
