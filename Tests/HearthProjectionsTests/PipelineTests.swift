import Dispatch
import Glibc
import Synchronization
import Testing

@testable import HearthProjections

@Suite("catch-up pipeline stages")
struct PipelineTests {
    struct Failure: Error, Equatable {}

    @Test("a lookahead hands over every item in order, never more than its depth ahead of the consumer")
    func lookaheadKeepsOrderAndDepth() throws {
        let produced = Atomic<Int>(0)
        let stage = Lookahead(count: 100, depth: 3) { index in
            produced.add(1, ordering: .sequentiallyConsistent)
            return index * 2
        }
        defer { stage.stop() }
        for index in 0..<100 {
            if index % 10 == 0 {
                // Let the producer run as far ahead as it may.
                usleep(2_000)
                // Items handed over, plus at most `depth` produced ahead.
                #expect(produced.load(ordering: .sequentiallyConsistent) <= index + 3)
            }
            #expect(try stage.next() == index * 2)
        }
        #expect(produced.load(ordering: .sequentiallyConsistent) == 100)
    }

    @Test("an error reaches the consumer at its place in the order, and production ends there")
    func lookaheadDeliversErrorsInOrder() throws {
        let produced = Atomic<Int>(0)
        let stage = Lookahead(count: 10, depth: 2) { index in
            produced.add(1, ordering: .sequentiallyConsistent)
            if index == 4 { throw Failure() }
            return index
        }
        defer { stage.stop() }
        for index in 0..<4 { #expect(try stage.next() == index) }
        #expect(throws: Failure.self) { try stage.next() }
        stage.stop()
        #expect(produced.load(ordering: .sequentiallyConsistent) == 5)
    }

    @Test("stop ends a producer blocked on a full buffer, and returns once it has ended")
    func lookaheadStops() {
        let produced = Atomic<Int>(0)
        let stage = Lookahead(count: 1_000, depth: 1) { index in
            produced.add(1, ordering: .sequentiallyConsistent)
            return index
        }
        // Wait for the first item, however slow the machine is to start the thread; the
        // producer then blocks on the full buffer.
        for _ in 0..<5_000 where produced.load(ordering: .sequentiallyConsistent) == 0 { usleep(1_000) }
        usleep(5_000)
        stage.stop()
        let count = produced.load(ordering: .sequentiallyConsistent)
        usleep(5_000)
        #expect(count == 1)
        #expect(produced.load(ordering: .sequentiallyConsistent) == count)
    }

    @Test("a lookahead with slack runs at a lower priority, on its own thread only")
    func lookaheadNiceness() throws {
        let priority: @Sendable () -> Int32 = { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }
        let base = priority()
        let stage = Lookahead(count: 1, depth: 1, niceness: 7) { _ in priority() }
        defer { stage.stop() }
        #expect(try stage.next() == min(base + 7, 19))
        #expect(priority() == base)
    }
}
