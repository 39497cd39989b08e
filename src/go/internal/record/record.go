// Package record holds the JSON records the program prints. Field names and
// nesting follow spec/native-record.schema.json exactly; the tests validate
// real output against that schema, so a renamed field fails there.
package record

import (
	"encoding/json"
	"io"
	"runtime"
)

const (
	Program        = "serverbench"
	ProgramVersion = "0.1.0"
	Language       = "go"
)

// Runtime describes what the Go runtime actually uses (not what was asked for),
// so the harness can check that GOMAXPROCS took effect.
type Runtime struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	Schedulers int    `json:"schedulers"`
	// GC is "greentea" or "nogreentea" (gc.go): which collector this build runs.
	GC string `json:"gc"`
}

func CurrentRuntime() Runtime {
	return Runtime{Name: "go", Version: runtime.Version(), Schedulers: runtime.GOMAXPROCS(0), GC: GC()}
}

type VersionInfo struct {
	Program        string  `json:"program"`
	ProgramVersion string  `json:"program_version"`
	Language       string  `json:"language"`
	Runtime        Runtime `json:"runtime"`
}

func CurrentVersion() VersionInfo {
	return VersionInfo{Program: Program, ProgramVersion: ProgramVersion, Language: Language, Runtime: CurrentRuntime()}
}

// Record is the one shape of every benchmark record this program prints
// (spec/native-record.schema.json): the same envelope for every benchmark, with
// the benchmark's own params (P), metrics (M) and validation (V). Role is set
// only in a socket program's records (server or client) and Knobs only in paper
// and mixed records; each is left out of the JSON when empty, so a record has
// exactly the fields its schema names, in this order.
type Record[P, M, V any] struct {
	Benchmark  string  `json:"benchmark"`
	Role       string  `json:"role,omitempty"`
	Language   string  `json:"language"`
	Variant    string  `json:"variant"`
	Params     P       `json:"params"`
	Metrics    M       `json:"metrics"`
	Validation V       `json:"validation"`
	Runtime    Runtime `json:"runtime"`
	// Knobs: every knob of this language and benchmark, resolved.
	Knobs map[string]string `json:"knobs,omitempty"`
}

// ---- pingping ----

type PingpingParams struct {
	MessageBytes int64  `json:"message_bytes"`
	Repetitions  int64  `json:"repetitions"`
	Payload      string `json:"payload"`
	// Knob flags given on the command line (paper and mixed; resolved values in Knobs).
	Send    *string `json:"send,omitempty"`
	Mailbox *string `json:"mailbox,omitempty"`
}

type PingpingMetrics struct {
	ElapsedS     float64 `json:"elapsed_s"`
	Messages     int64   `json:"messages"`
	NsPerMessage float64 `json:"ns_per_message"`
	// Only in paper and mixed records (docs/spec.md "The paper variant").
	ReportedElapsedS *float64 `json:"reported_elapsed_s,omitempty"`
	TrueElapsedS     *float64 `json:"true_elapsed_s,omitempty"`
}

type PingpingValidation struct {
	OK            bool  `json:"ok"`
	ReceivedA     int64 `json:"received_a"`
	ReceivedB     int64 `json:"received_b"`
	PayloadErrors int64 `json:"payload_errors"`
}

type Pingping = Record[PingpingParams, PingpingMetrics, PingpingValidation]

// ---- spawn ----

type SpawnParams struct {
	Processes int64   `json:"processes"`
	Timer     *string `json:"timer,omitempty"` // a knob flag given on the command line
}

// Pointers: a value that could not be measured is null, never -1.
type SpawnMetrics struct {
	SpawnCallS         float64  `json:"spawn_call_s"`
	AllReadyS          float64  `json:"all_ready_s"`
	RSSBytesBefore     *int64   `json:"rss_bytes_before"`
	RSSBytesAfter      *int64   `json:"rss_bytes_after"`
	BytesPerProcess    *float64 `json:"bytes_per_process"`
	RuntimeMemoryBytes *int64   `json:"runtime_memory_bytes"`
	// Only in paper and mixed records.
	ReportedElapsedS *float64 `json:"reported_elapsed_s,omitempty"`
	TrueElapsedS     *float64 `json:"true_elapsed_s,omitempty"`
}

type SpawnValidation struct {
	OK    bool  `json:"ok"`
	Ready int64 `json:"ready"`
}

type Spawn = Record[SpawnParams, SpawnMetrics, SpawnValidation]

// ---- throughput ----

type ThroughputParams struct {
	Pairs        int64   `json:"pairs"`
	MessageBytes int64   `json:"message_bytes"`
	DurationS    float64 `json:"duration_s"`
	ReportEvery  int64   `json:"report_every"`
	Payload      string  `json:"payload"`
	// Knob flags given on the command line (paper and mixed; resolved values in Knobs).
	Send         *string `json:"send,omitempty"`
	Mailbox      *string `json:"mailbox,omitempty"`
	ServerBuffer *string `json:"server_buffer,omitempty"`
	Counting     *string `json:"counting,omitempty"`
	Window       *string `json:"window,omitempty"`
}

type ThroughputMetrics struct {
	Exchanges       int64        `json:"exchanges"`
	ElapsedS        float64      `json:"elapsed_s"`
	ExchangesPerS   float64      `json:"exchanges_per_s"`
	PaperMsgsPerMin float64      `json:"paper_msgs_per_min"`
	Samples         [][2]float64 `json:"samples"`
	// Only in paper and mixed records: what the original would have printed
	// (reported_printed false: nothing; then the other reported_* are null)
	// and the exact figures measured alongside.
	ReportedPrinted    *bool    `json:"reported_printed,omitempty"`
	ReportedExchanges  *int64   `json:"reported_exchanges,omitempty"`
	ReportedElapsedS   *float64 `json:"reported_elapsed_s,omitempty"`
	ReportedMsgsPerMin *float64 `json:"reported_msgs_per_min,omitempty"`
	TrueExchanges      *int64   `json:"true_exchanges,omitempty"`
	TrueElapsedS       *float64 `json:"true_elapsed_s,omitempty"`
	TrueMsgsPerMin     *float64 `json:"true_msgs_per_min,omitempty"`
	BatchSize          *int64   `json:"batch_size,omitempty"`
}

type ThroughputValidation struct {
	OK                bool  `json:"ok"`
	ReportedExchanges int64 `json:"reported_exchanges"`
	CountedExchanges  int64 `json:"counted_exchanges"`
	PayloadErrors     int64 `json:"payload_errors"`
	MinPairExchanges  int64 `json:"min_pair_exchanges"`
}

type Throughput = Record[ThroughputParams, ThroughputMetrics, ThroughputValidation]

// WriteLine prints v as exactly one line of JSON (json.Marshal never emits a
// newline inside a value).
func WriteLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}
