import Testing
import TernCore

@Suite struct StatisticsTests {
    @Test func thePercentileIsTheValueAtTheNearestRank() {
        let values = (1...21).map(Double.init).reversed().map { $0 }
        #expect(Statistics.percentile(values, 0.95) == 20)
        #expect(Statistics.percentile(values, 0.5) == 11)
        #expect(Statistics.percentile(values, 1) == 21)
        #expect(Statistics.percentile(values, 0) == 1)
    }

    @Test func thePercentileOfNothingIsZero() {
        #expect(Statistics.percentile([], 0.95) == 0)
    }

    @Test func theMedianOfAnEvenCountIsTheMeanOfTheMiddleTwo() {
        #expect(Statistics.median([4, 1, 3, 2]) == 2.5)
        #expect(Statistics.median([3, 1, 2]) == 2)
        #expect(Statistics.median([]) == 0)
    }
}
