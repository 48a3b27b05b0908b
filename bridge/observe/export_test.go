package observe

import "github.com/prometheus/client_golang/prometheus"

// NewMetricsCap is NewMetrics with a smaller cap on tool label values.
func NewMetricsCap(reg *prometheus.Registry, version string, toolCap int) (*Metrics, error) {
	return newMetrics(reg, version, toolCap)
}

// Cut is cut.
var Cut = cut
