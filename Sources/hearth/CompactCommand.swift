import ArgumentParser
import HearthStore
import HearthTools

/// `hearth compact`: the data file rewritten with its live pages only.
struct Compact: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Rewrite data.mdb with its live pages only, so no freed page keeps erased data (stop the daemon first).",
        discussion: """
            LMDB reuses the pages a write frees but never zeroes them: a deleted account's projection records stay \
            in the file until written over. After a compaction none is left. systemd/hearth-compact.timer runs it \
            daily, stopping and starting the daemon around it.
            """)

    @OptionGroup var data: DataOptions

    func run() throws {
        let summary = try data.directory.compact()
        let out = Output.standardOutput
        out.line(
            "compacted \(data.directory): \(formatCount(UInt64(summary.bytesBefore))) -> \(formatCount(UInt64(summary.bytesAfter))) bytes")
        out.flush()
    }
}
