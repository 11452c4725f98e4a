// ecnlab reference scenarios on ns-3 (dumbbell topologies).
//
// One program, several canonical scenarios (see SCENARIOS.md in this folder for the
// authoritative definitions; the ecnlab side is written from that file):
//
//   red100      3x3 hosts, 100 Mbps / 10 ms bottleneck, RED (optionally ECN), 2 bulk + 6 short
//   dt1g        N x N hosts, 1 Gbps / 20 ms bottleneck, FIFO 2000 packets, N bulk flows
//   dt1g-1000   dt1g with N = 1000
//
// Output: one JSON object on stdout (or in --out=FILE).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/nix-vector-helper.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#ifndef ECNLAB_NS3_VERSION
#define ECNLAB_NS3_VERSION "unknown"
#endif

using namespace ns3;

namespace
{

// ---------------------------------------------------------------- minimal JSON writer

class Json
{
  public:
    void BeginObject()
    {
        Sep();
        m_os << '{';
        m_first.push_back(true);
    }

    void EndObject()
    {
        m_os << '}';
        m_first.pop_back();
    }

    void BeginArray()
    {
        Sep();
        m_os << '[';
        m_first.push_back(true);
    }

    void EndArray()
    {
        m_os << ']';
        m_first.pop_back();
    }

    Json& Key(const std::string& k)
    {
        Sep();
        Str(k);
        m_os << ':';
        m_afterKey = true;
        return *this;
    }

    void Value(const std::string& s)
    {
        Sep();
        Str(s);
    }

    void Value(const char* s)
    {
        Value(std::string(s));
    }

    void Value(bool b)
    {
        Sep();
        m_os << (b ? "true" : "false");
    }

    void Value(double d)
    {
        Sep();
        if (!std::isfinite(d))
        {
            m_os << "null";
            return;
        }
        char buf[64];
        std::snprintf(buf, sizeof(buf), "%.12g", d);
        m_os << buf;
    }

    void Value(uint64_t v)
    {
        Sep();
        m_os << v;
    }

    void Value(int64_t v)
    {
        Sep();
        m_os << v;
    }

    void Value(uint32_t v)
    {
        Value(static_cast<uint64_t>(v));
    }

    void Value(int v)
    {
        Value(static_cast<int64_t>(v));
    }

    void Null()
    {
        Sep();
        m_os << "null";
    }

    template <typename T>
    void Field(const std::string& k, const T& v)
    {
        Key(k);
        Value(v);
    }

    void NullField(const std::string& k)
    {
        Key(k);
        Null();
    }

    std::string str() const
    {
        return m_os.str();
    }

  private:
    void Sep()
    {
        if (m_afterKey)
        {
            m_afterKey = false;
            return;
        }
        if (!m_first.empty())
        {
            if (!m_first.back())
            {
                m_os << ',';
            }
            m_first.back() = false;
        }
    }

    void Str(const std::string& s)
    {
        m_os << '"';
        for (char c : s)
        {
            switch (c)
            {
            case '"':
                m_os << "\\\"";
                break;
            case '\\':
                m_os << "\\\\";
                break;
            case '\n':
                m_os << "\\n";
                break;
            default:
                if (static_cast<unsigned char>(c) < 0x20)
                {
                    char buf[8];
                    std::snprintf(buf, sizeof(buf), "\\u%04x", c);
                    m_os << buf;
                }
                else
                {
                    m_os << c;
                }
            }
        }
        m_os << '"';
    }

    std::ostringstream m_os;
    std::vector<bool> m_first;
    bool m_afterKey{false};
};

// ---------------------------------------------------------------- scenario description

struct FlowSpec
{
    uint32_t id;
    uint32_t left;  // index of the sending host on the left
    uint32_t right; // index of the receiving host on the right
    uint64_t size;  // bytes; 0 = unlimited (bulk until the end of the run)
    double start;   // seconds
};

struct Scenario
{
    std::string name;
    uint32_t nLeft{0};
    uint32_t nRight{0};
    std::string accessRate;
    std::string accessDelay;
    std::string bottleneckRate;
    std::string bottleneckDelay;
    std::string queue; // "red" or "fifo"
    uint32_t queuePackets{0};
    uint32_t accessQueuePackets{1000};
    // RED (packet mode)
    double minTh{30};
    double maxTh{60};
    double qW{0.002};
    double lInterm{50};
    bool gentle{true};
    bool wait{true};
    bool hardDrop{true};
    uint32_t meanPktSize{1040};
    bool ecn{false};
    double duration{10};
    uint32_t segmentSize{1000};
    std::string delAckTimeout; // empty: the §3 default (200 ms)
    std::string congestionControl{"ns3::TcpNewReno"};
    std::vector<FlowSpec> flows;
};

// ---------------------------------------------------------------- measurement state

struct FlowState
{
    FlowSpec spec;
    Ptr<BulkSendApplication> app;
    Ptr<PacketSink> sink;
    uint64_t rxTraced{0};
    int64_t doneNs{-1}; // time the sink got the last byte of a finite flow
    uint64_t retx{0};
    uint64_t rtos{0}; // entries into CA_LOSS: retransmission timeouts
    bool traced{false};
};

void
OnSinkRx(FlowState* f, Ptr<const Packet> p, const Address&)
{
    f->rxTraced += p->GetSize();
    if (f->doneNs < 0 && f->spec.size > 0 && f->rxTraced >= f->spec.size)
    {
        f->doneNs = Simulator::Now().GetNanoSeconds();
    }
}

void
OnRetransmission(FlowState* f,
                 Ptr<const Packet>,
                 const TcpHeader&,
                 const Address&,
                 const Address&,
                 Ptr<const TcpSocketBase>)
{
    f->retx++;
}

void
OnCongStateCountRto(FlowState* f, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t v)
{
    if (v == TcpSocketState::CA_LOSS)
    {
        f->rtos++;
    }
}

void
HookRtoCount(FlowState* f)
{
    Ptr<Socket> s = f->app->GetSocket();
    if (s)
    {
        s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongStateCountRto, f));
    }
}

// Optional per-flow TCP state log (CSV), for looking at dynamics; off by default.
struct TcpLog
{
    std::ofstream os;
};

void
OnCwnd(TcpLog* log, uint32_t id, uint32_t, uint32_t v)
{
    log->os << Simulator::Now().GetSeconds() << ',' << id << ",cwnd," << v << '\n';
}

void
OnSsThresh(TcpLog* log, uint32_t id, uint32_t, uint32_t v)
{
    log->os << Simulator::Now().GetSeconds() << ',' << id << ",ssthresh," << v << '\n';
}

void
OnCongState(TcpLog* log,
            uint32_t id,
            TcpSocketState::TcpCongState_t,
            TcpSocketState::TcpCongState_t v)
{
    log->os << Simulator::Now().GetSeconds() << ',' << id << ",state,"
            << TcpSocketState::TcpCongStateName[v] << '\n';
}

void
OnRto(TcpLog* log, uint32_t id, Time, Time v)
{
    log->os << Simulator::Now().GetSeconds() << ',' << id << ",rto," << v.GetSeconds() << '\n';
}

void
HookTcpLog(TcpLog* log, Ptr<BulkSendApplication> app, uint32_t id)
{
    Ptr<Socket> s = app->GetSocket();
    if (!s)
    {
        return;
    }
    s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, log, id));
    s->TraceConnectWithoutContext("SlowStartThreshold", MakeBoundCallback(&OnSsThresh, log, id));
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, log, id));
    s->TraceConnectWithoutContext("RTO", MakeBoundCallback(&OnRto, log, id));
}

struct LinkCounter
{
    uint64_t packets{0};
    uint64_t bytes{0};
};

void
OnPhyTxEnd(LinkCounter* c, Ptr<const Packet> p)
{
    c->packets++;
    c->bytes += p->GetSize();
}

struct QueueSampler
{
    Ptr<QueueDisc> qd;
    Time interval;
    Time end;
    uint64_t samples{0};
    uint64_t sum{0};
    uint64_t sumAfterWarmup{0};
    uint64_t samplesAfterWarmup{0};
    uint32_t max{0};
    Time warmup;
    bool keepSeries{false};
    std::vector<uint32_t> series;

    void Sample()
    {
        uint32_t n = qd->GetNPackets();
        samples++;
        sum += n;
        if (Simulator::Now() > warmup)
        {
            samplesAfterWarmup++;
            sumAfterWarmup += n;
        }
        if (n > max)
        {
            max = n;
        }
        if (keepSeries)
        {
            series.push_back(n);
        }
        if (Simulator::Now() + interval <= end)
        {
            Simulator::Schedule(interval, &QueueSampler::Sample, this);
        }
    }
};

struct Snapshot
{
    LinkCounter* link{nullptr};
    uint64_t bytesAtWarmup{0};
    uint64_t packetsAtWarmup{0};

    void Take()
    {
        bytesAtWarmup = link->bytes;
        packetsAtWarmup = link->packets;
    }
};

// n unlimited bulk flows, left host i to right host i, flow i starting at start(i) seconds.
void
AddBulkFlows(Scenario& sc, uint32_t n, const std::function<double(uint32_t)>& start)
{
    for (uint32_t i = 0; i < n; i++)
    {
        FlowSpec f;
        f.id = i;
        f.left = i;
        f.right = i;
        f.size = 0;
        f.start = start(i);
        sc.flows.push_back(f);
    }
}

double
ProcessCpuSeconds()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

uint64_t
ParseRateBps(const std::string& s)
{
    return DataRate(s).GetBitRate();
}

double
ParseTimeS(const std::string& s)
{
    return Time(s).GetSeconds();
}

std::string
AttrString(Ptr<Object> obj, const std::string& name)
{
    // Enum/bool/number attributes all serialise through their checker.
    struct TypeId::AttributeInformation info;
    if (!obj->GetInstanceTypeId().LookupAttributeByName(name, &info))
    {
        return "?";
    }
    if (!(info.flags & TypeId::ATTR_GET) || !info.accessor->HasGetter())
    {
        // write-only attribute: report the default that new objects were built with
        return info.initialValue->SerializeToString(info.checker);
    }
    Ptr<AttributeValue> val = info.checker->Create();
    obj->GetAttribute(name, *val);
    return val->SerializeToString(info.checker);
}

} // namespace

int
main(int argc, char* argv[])
{
    auto setupStart = std::chrono::steady_clock::now();

    // ------------------------------------------------------------ command line
    std::string scenarioName = "red100";
    int ecn = -1;
    int flows = -1;
    double duration = -1;
    uint32_t seed = 1;
    uint32_t run = 1;
    double sampleMs = 1.0;
    double warmup = 1.0;
    bool light = false;
    bool queueSeries = false;
    std::string out;
    std::string tcpLogFile;
    std::string pcapPrefix;
    std::string routing = "global";
    uint32_t sendSize = 0; // 0: 64 KiB below 100 flows, 1 MiB from 100 flows (SCENARIOS.md)
    std::string accessRate;
    std::string accessDelay;
    std::string bottleneckRate;
    std::string bottleneckDelay;
    int queuePackets = -1;
    double minTh = -1;
    double maxTh = -1;

    // ------------------------------------------------------------ TCP configuration
    // Set before the command line is parsed, so --ns3::...=value can still override any.
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1000));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(64u << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(64u << 20));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(1)));
    // TcpSocket::TcpNoDelay (true), TcpSocketBase::LimitedTransmit (true),
    // ReTxThreshold (3), ConnTimeout (3 s), RttEstimator (mean-deviation, 1 s initial)
    // are left at their defaults; SCENARIOS.md lists them.

    CommandLine cmd(__FILE__);
    cmd.AddValue("scenario", "red100 | dt1g | dt1g-1000 | dctcp10g", scenarioName);
    cmd.AddValue("ecn", "red100: 1 = RED marks and TCP negotiates ECN, 0 = off", ecn);
    cmd.AddValue("flows", "dt1g, dctcp10g: number of flows (= hosts per side)", flows);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("seed", "RngSeedManager seed", seed);
    cmd.AddValue("run", "RngSeedManager run number", run);
    cmd.AddValue("sample_ms", "bottleneck queue sampling interval (ms)", sampleMs);
    cmd.AddValue("warmup", "seconds excluded from the *_after_warmup figures", warmup);
    cmd.AddValue("light", "no per-packet sink traces (FCT only for flows <= 1 MB)", light);
    cmd.AddValue("queue_series", "include the sampled queue length series", queueSeries);
    cmd.AddValue("out", "write JSON here instead of stdout", out);
    cmd.AddValue("send_size",
                 "bytes the sending application writes per call (0 = by flow count)",
                 sendSize);
    cmd.AddValue("routing", "global (canonical) | nix (ns-3 nix-vector routing)", routing);
    cmd.AddValue("pcap", "write pcap files of the bottleneck link with this prefix", pcapPrefix);
    cmd.AddValue("tcp_log", "write per-flow cwnd/ssthresh/state/RTO changes (CSV) here", tcpLogFile);
    cmd.AddValue("access_rate", "override access link rate", accessRate);
    cmd.AddValue("access_delay", "override access link delay", accessDelay);
    cmd.AddValue("bottleneck_rate", "override bottleneck rate", bottleneckRate);
    cmd.AddValue("bottleneck_delay", "override bottleneck delay", bottleneckDelay);
    cmd.AddValue("queue_packets", "override bottleneck queue limit (packets)", queuePackets);
    cmd.AddValue("min_th", "override RED MinTh (packets)", minTh);
    cmd.AddValue("max_th", "override RED MaxTh (packets)", maxTh);
    cmd.Parse(argc, argv);

    // ------------------------------------------------------------ scenario definitions
    if (flows == 0 || flows < -1)
    {
        std::cerr << "error: flows must be positive" << std::endl;
        return 2;
    }
    Scenario sc;
    if (scenarioName == "red100")
    {
        sc.name = "red100";
        sc.nLeft = 3;
        sc.nRight = 3;
        sc.accessRate = "1Gbps";
        sc.accessDelay = "1ms";
        sc.bottleneckRate = "100Mbps";
        sc.bottleneckDelay = "10ms";
        sc.queue = "red";
        sc.queuePackets = 100;
        sc.duration = 10;
        sc.ecn = false;
        const uint64_t bulk = 125000000ULL; // 1 Gb
        const uint64_t shortSizes[6] = {9000, 16000, 9000, 16000, 9000, 16000};
        for (uint32_t i = 0; i < 8; i++)
        {
            FlowSpec f;
            f.id = i;
            f.left = i % 3;
            f.right = i % 3;
            if (i < 2)
            {
                f.size = bulk;
                f.start = 0.1 * i;
            }
            else
            {
                f.size = shortSizes[i - 2];
                f.start = 1.0 * (i - 1);
            }
            sc.flows.push_back(f);
        }
    }
    else if (scenarioName == "dt1g" || scenarioName == "dt1g-1000")
    {
        sc.name = scenarioName;
        uint32_t n = (scenarioName == "dt1g-1000") ? 1000 : 10;
        if (flows > 0)
        {
            n = static_cast<uint32_t>(flows);
        }
        sc.nLeft = n;
        sc.nRight = n;
        sc.accessRate = "10Gbps";
        sc.accessDelay = "1ms";
        sc.bottleneckRate = "1Gbps";
        sc.bottleneckDelay = "20ms";
        sc.queue = "fifo";
        sc.queuePackets = 2000;
        sc.duration = 5;
        sc.ecn = false;
        AddBulkFlows(sc, n, [](uint32_t i) { return 0.001 * (i % 100); });
    }
    else if (scenarioName == "dctcp10g")
    {
        // DCTCP at 10 Gb/s behind a step marker (SCENARIOS.md): RED with MinTh = MaxTh = K,
        // QW = 1 and no gentle region marks every ECT packet that finds K or more queued.
        uint32_t n = flows > 0 ? static_cast<uint32_t>(flows) : 4;
        sc.name = scenarioName;
        sc.nLeft = n;
        sc.nRight = n;
        sc.accessRate = "25Gbps";
        sc.accessDelay = "5us";
        sc.bottleneckRate = "10Gbps";
        sc.bottleneckDelay = "20us";
        sc.queue = "red";
        sc.queuePackets = 400;
        sc.minTh = 65;
        sc.maxTh = 65;
        sc.qW = 1.0;
        sc.gentle = false;
        sc.wait = false;
        sc.hardDrop = false;
        sc.meanPktSize = 1490;
        sc.duration = 2;
        sc.ecn = true;
        sc.segmentSize = 1448;
        sc.congestionControl = "ns3::TcpDctcp";
        // Linux's delayed-ACK timeout: with ns-3's 200 ms, equal to the RTO floor, a DCTCP
        // window cut to one segment waits for a delayed ACK that the RTO beats, and flows
        // that start into the marked queue starve.
        sc.delAckTimeout = "40ms";
        AddBulkFlows(sc, n, [](uint32_t i) { return 0.05 * i; });
    }
    else
    {
        std::cerr << "error: unknown scenario '" << scenarioName
                  << "' (expected red100, dt1g, dt1g-1000 or dctcp10g)" << std::endl;
        return 2;
    }
    if (!sc.delAckTimeout.empty())
    {
        Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(Time(sc.delAckTimeout)));
    }
    if (sc.segmentSize != 1000)
    {
        Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(sc.segmentSize));
    }
    if (sc.congestionControl != "ns3::TcpNewReno")
    {
        Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                           TypeIdValue(TypeId::LookupByName(sc.congestionControl)));
    }
    if (flows > 0 && sc.name == "red100")
    {
        std::cerr << "error: --flows applies to dt1g only" << std::endl;
        return 2;
    }
    if (ecn >= 0)
    {
        if (sc.queue != "red" && ecn == 1)
        {
            std::cerr << "error: --ecn=1 needs a RED bottleneck (scenario red100)" << std::endl;
            return 2;
        }
        sc.ecn = (ecn != 0);
    }
    if (duration != -1)
    {
        if (!(duration > 0))
        {
            std::cerr << "error: duration must be positive" << std::endl;
            return 2;
        }
        sc.duration = duration;
    }
    if (!accessRate.empty())
    {
        sc.accessRate = accessRate;
    }
    if (!accessDelay.empty())
    {
        sc.accessDelay = accessDelay;
    }
    if (!bottleneckRate.empty())
    {
        sc.bottleneckRate = bottleneckRate;
    }
    if (!bottleneckDelay.empty())
    {
        sc.bottleneckDelay = bottleneckDelay;
    }
    if (queuePackets > 0)
    {
        sc.queuePackets = static_cast<uint32_t>(queuePackets);
    }
    if (minTh >= 0)
    {
        sc.minTh = minTh;
    }
    if (maxTh >= 0)
    {
        sc.maxTh = maxTh;
    }
    if (sc.minTh > sc.maxTh)
    {
        std::cerr << "error: min_th must not exceed max_th" << std::endl;
        return 2;
    }
    if (routing != "global" && routing != "nix")
    {
        std::cerr << "error: routing must be global or nix" << std::endl;
        return 2;
    }
    if (!(sampleMs >= 0.001))
    {
        std::cerr << "error: sample_ms must be at least 0.001 (1 us)" << std::endl;
        return 2;
    }
    if (sc.flows.size() > 50000)
    {
        std::cerr << "error: at most 50000 flows (one TCP port per flow)" << std::endl;
        return 2;
    }

    if (sendSize == 0)
    {
        sendSize = sc.flows.size() < 100 ? (64u << 10) : (1u << 20);
    }

    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);

    // The one scenario-dependent TCP setting (the rest is set before parsing).
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue(sc.ecn ? "On" : "Off"));

    // ------------------------------------------------------------ topology
    NodeContainer left;
    NodeContainer right;
    NodeContainer routers;
    left.Create(sc.nLeft);
    right.Create(sc.nRight);
    routers.Create(2);
    Ptr<Node> lr = routers.Get(0);
    Ptr<Node> rr = routers.Get(1);

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue(sc.accessRate));
    access.SetChannelAttribute("Delay", StringValue(sc.accessDelay));
    access.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(sc.bottleneckRate));
    bottleneck.SetChannelAttribute("Delay", StringValue(sc.bottleneckDelay));
    bottleneck.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));

    InternetStackHelper stack;
    Ipv4NixVectorHelper nix;
    if (routing == "nix")
    {
        stack.SetRoutingHelper(nix);
    }
    stack.Install(left);
    stack.Install(right);
    stack.Install(routers);

    TrafficControlHelper fifoAccess;
    fifoAccess.SetRootQueueDisc("ns3::FifoQueueDisc",
                                "MaxSize",
                                StringValue(std::to_string(sc.accessQueuePackets) + "p"));

    TrafficControlHelper bnQueue;
    if (sc.queue == "red")
    {
        bnQueue.SetRootQueueDisc("ns3::RedQueueDisc",
                                 "MaxSize",
                                 StringValue(std::to_string(sc.queuePackets) + "p"),
                                 "MinTh",
                                 DoubleValue(sc.minTh),
                                 "MaxTh",
                                 DoubleValue(sc.maxTh),
                                 "QW",
                                 DoubleValue(sc.qW),
                                 "LInterm",
                                 DoubleValue(sc.lInterm),
                                 "Gentle",
                                 BooleanValue(sc.gentle),
                                 "Wait",
                                 BooleanValue(sc.wait),
                                 "UseHardDrop",
                                 BooleanValue(sc.hardDrop),
                                 "MeanPktSize",
                                 UintegerValue(sc.meanPktSize),
                                 "UseEcn",
                                 BooleanValue(sc.ecn),
                                 "LinkBandwidth",
                                 DataRateValue(DataRate(sc.bottleneckRate)),
                                 "LinkDelay",
                                 TimeValue(Time(sc.bottleneckDelay)));
    }
    else
    {
        bnQueue.SetRootQueueDisc("ns3::FifoQueueDisc",
                                 "MaxSize",
                                 StringValue(std::to_string(sc.queuePackets) + "p"));
    }

    Ipv4AddressHelper addr;
    std::vector<Ipv4Address> rightAddr(sc.nRight);
    QueueDiscContainer otherQueues;

    // Access links get /30 subnets: left side from 10.1.0.0, right side from 10.2.0.0.
    addr.SetBase("10.1.0.0", "255.255.255.252");
    for (uint32_t i = 0; i < sc.nLeft; i++)
    {
        NetDeviceContainer d = access.Install(left.Get(i), lr);
        otherQueues.Add(fifoAccess.Install(d));
        addr.Assign(d);
        addr.NewNetwork();
    }
    addr.SetBase("10.2.0.0", "255.255.255.252");
    for (uint32_t i = 0; i < sc.nRight; i++)
    {
        NetDeviceContainer d = access.Install(rr, right.Get(i));
        otherQueues.Add(fifoAccess.Install(d));
        Ipv4InterfaceContainer ifs = addr.Assign(d);
        rightAddr[i] = ifs.GetAddress(1);
        addr.NewNetwork();
    }
    NetDeviceContainer bnDevs = bottleneck.Install(lr, rr);
    QueueDiscContainer bnQds = bnQueue.Install(bnDevs.Get(0));
    otherQueues.Add(fifoAccess.Install(bnDevs.Get(1)));
    addr.SetBase("10.3.0.0", "255.255.255.252");
    addr.Assign(bnDevs);
    Ptr<QueueDisc> bnQd = bnQds.Get(0);

    if (routing == "global")
    {
        Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    }

    if (!pcapPrefix.empty())
    {
        bottleneck.EnablePcap(pcapPrefix, bnDevs, false);
    }

    // ------------------------------------------------------------ applications
    TcpLog tcpLog;
    if (!tcpLogFile.empty())
    {
        tcpLog.os.open(tcpLogFile);
        if (!tcpLog.os)
        {
            std::cerr << "error: cannot write " << tcpLogFile << std::endl;
            return 1;
        }
        tcpLog.os << "time_s,flow,what,value\n";
    }
    std::vector<FlowState> fs(sc.flows.size());
    for (size_t k = 0; k < sc.flows.size(); k++)
    {
        FlowState& f = fs[k];
        f.spec = sc.flows[k];
        uint16_t port = static_cast<uint16_t>(10000 + f.spec.id);

        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sinkHelper.Install(right.Get(f.spec.right));
        sa.Start(Seconds(0));
        f.sink = DynamicCast<PacketSink>(sa.Get(0));

        BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(rightAddr[f.spec.right], port));
        src.SetAttribute("MaxBytes", UintegerValue(f.spec.size));
        src.SetAttribute("SendSize", UintegerValue(sendSize));
        ApplicationContainer ca = src.Install(left.Get(f.spec.left));
        ca.Start(Seconds(f.spec.start));
        f.app = DynamicCast<BulkSendApplication>(ca.Get(0));

        if (f.spec.size > 0 && (!light || f.spec.size <= 1000000))
        {
            if (!f.sink->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnSinkRx, &f)))
            {
                NS_FATAL_ERROR("PacketSink has no Rx trace source");
            }
            f.traced = true;
        }
        if (!f.app->TraceConnectWithoutContext("TcpRetransmission",
                                               MakeBoundCallback(&OnRetransmission, &f)))
        {
            NS_FATAL_ERROR("BulkSendApplication has no TcpRetransmission trace source");
        }
        // the socket exists once the application has started
        Simulator::Schedule(Seconds(f.spec.start) + NanoSeconds(1), &HookRtoCount, &f);
        if (tcpLog.os.is_open())
        {
            // the socket exists once the application has started
            Simulator::Schedule(Seconds(f.spec.start) + NanoSeconds(1),
                                &HookTcpLog,
                                &tcpLog,
                                f.app,
                                f.spec.id);
        }
    }

    // ------------------------------------------------------------ bottleneck measurement
    LinkCounter bnLink;
    if (!bnDevs.Get(0)->TraceConnectWithoutContext("PhyTxEnd",
                                                   MakeBoundCallback(&OnPhyTxEnd, &bnLink)))
    {
        NS_FATAL_ERROR("PointToPointNetDevice has no PhyTxEnd trace source");
    }

    QueueSampler sampler;
    sampler.qd = bnQd;
    sampler.interval = MicroSeconds(static_cast<int64_t>(std::llround(sampleMs * 1000.0)));
    sampler.end = Seconds(sc.duration);
    sampler.warmup = Seconds(warmup);
    sampler.keepSeries = queueSeries;
    Simulator::Schedule(sampler.interval, &QueueSampler::Sample, &sampler);

    Snapshot snap;
    snap.link = &bnLink;
    if (warmup > 0 && warmup < sc.duration)
    {
        Simulator::Schedule(Seconds(warmup), &Snapshot::Take, &snap);
    }

    Simulator::Stop(Seconds(sc.duration));

    double cpuStart = ProcessCpuSeconds();
    auto runStart = std::chrono::steady_clock::now();
    Simulator::Run();
    auto runEnd = std::chrono::steady_clock::now();
    double cpuSeconds = ProcessCpuSeconds() - cpuStart;

    double setupSeconds = std::chrono::duration<double>(runStart - setupStart).count();
    double wallSeconds = std::chrono::duration<double>(runEnd - runStart).count();
    uint64_t events = Simulator::GetEventCount();

    // ------------------------------------------------------------ collect results
    const QueueDisc::Stats& st = bnQd->GetStats();
    uint64_t otherDrops = 0;
    for (uint32_t i = 0; i < otherQueues.GetN(); i++)
    {
        otherDrops += otherQueues.Get(i)->GetStats().nTotalDroppedPackets;
    }

    double bnRate = static_cast<double>(ParseRateBps(sc.bottleneckRate));
    double simEnd = sc.duration;

    Json j;
    j.BeginObject();
    j.Field("ns3_version", ECNLAB_NS3_VERSION);
    j.Field("scenario", sc.name);

    j.Key("params");
    j.BeginObject();
    j.Field("hosts_left", sc.nLeft);
    j.Field("hosts_right", sc.nRight);
    j.Field("flows", static_cast<uint32_t>(sc.flows.size()));
    j.Field("access_rate_bps", ParseRateBps(sc.accessRate));
    j.Field("access_delay_s", ParseTimeS(sc.accessDelay));
    j.Field("bottleneck_rate_bps", ParseRateBps(sc.bottleneckRate));
    j.Field("bottleneck_delay_s", ParseTimeS(sc.bottleneckDelay));
    j.Field("queue", sc.queue);
    j.Field("queue_packets", sc.queuePackets);
    j.Field("access_queue_packets", sc.accessQueuePackets);
    j.Field("device_queue_packets", 1);
    j.Field("routing", routing);
    j.Field("send_size", sendSize);
    if (sc.queue == "red")
    {
        j.Key("red");
        j.BeginObject();
        j.Field("min_th", sc.minTh);
        j.Field("max_th", sc.maxTh);
        j.Field("qw", sc.qW);
        j.Field("l_interm", sc.lInterm);
        j.Field("max_p", 1.0 / sc.lInterm);
        j.Field("gentle", sc.gentle);
        j.Field("wait", sc.wait);
        j.Field("hard_drop", sc.hardDrop);
        j.Field("mean_pkt_size", sc.meanPktSize);
        j.Field("link_bandwidth_bps", ParseRateBps(sc.bottleneckRate));
        j.EndObject();
    }
    j.Field("ecn", sc.ecn);
    j.Field("duration_s", sc.duration);
    j.Field("seed", seed);
    j.Field("run", run);
    j.Field("sample_ms", sampleMs);
    j.Field("warmup_s", warmup);
    j.Field("light", light);
    j.EndObject();

    // Effective TCP attributes as ns-3 sees them on one sender socket (after the run).
    j.Key("tcp");
    j.BeginObject();
    Ptr<TcpL4Protocol> l4 = left.Get(0)->GetObject<TcpL4Protocol>();
    j.Field("congestion_control", AttrString(l4, "SocketType"));
    j.Field("recovery", AttrString(l4, "RecoveryType"));
    Ptr<Socket> sock = fs.empty() ? nullptr : fs[0].app->GetSocket();
    if (sock)
    {
        const char* names[] = {"SegmentSize",
                               "InitialCwnd",
                               "DelAckCount",
                               "DelAckTimeout",
                               "SndBufSize",
                               "RcvBufSize",
                               "TcpNoDelay",
                               "ConnTimeout",
                               "Timestamp",
                               "Sack",
                               "WindowScaling",
                               "MinRto",
                               "ClockGranularity",
                               "UseEcn",
                               "LimitedTransmit",
                               "ReTxThreshold",
                               "InitialSlowStartThreshold"};
        for (const char* n : names)
        {
            j.Field(n, AttrString(sock, n));
        }
    }
    j.EndObject();

    j.Field("wall_seconds", wallSeconds);
    j.Field("cpu_seconds", cpuSeconds);
    j.Field("setup_seconds", setupSeconds);
    j.Field("events", events);
    j.Field("events_per_second", wallSeconds > 0 ? static_cast<double>(events) / wallSeconds : 0.0);

    // per flow
    uint64_t totalRx = 0;
    j.Key("flows");
    j.BeginArray();
    for (auto& f : fs)
    {
        uint64_t rx = f.sink->GetTotalRx();
        totalRx += rx;
        j.BeginObject();
        j.Field("id", f.spec.id);
        j.Field("src_host", f.spec.left);
        j.Field("dst_host", f.spec.right);
        if (f.spec.size > 0)
        {
            j.Field("size_bytes", f.spec.size);
        }
        else
        {
            j.NullField("size_bytes");
        }
        j.Field("start_s", f.spec.start);
        j.Field("bytes_received", rx);
        bool done = f.doneNs >= 0;
        if (!done && f.spec.size > 0 && rx >= f.spec.size && !f.traced)
        {
            // finished, but its completion time was not traced (light mode)
            j.NullField("fct_s");
            j.Field("finished", true);
            j.NullField("goodput_bps");
        }
        else if (done)
        {
            double fct = f.doneNs * 1e-9 - f.spec.start;
            j.Field("fct_s", fct);
            j.Field("finished", true);
            j.Field("goodput_bps", fct > 0 ? rx * 8.0 / fct : 0.0);
        }
        else
        {
            j.NullField("fct_s");
            j.Field("finished", false);
            double span = simEnd - f.spec.start;
            j.Field("goodput_bps", span > 0 ? rx * 8.0 / span : 0.0);
        }
        j.Field("retransmissions", f.retx);
        j.Field("rtos", f.rtos);
        j.EndObject();
    }
    j.EndArray();

    // bottleneck
    j.Key("bottleneck");
    j.BeginObject();
    j.Field("enqueued", st.nTotalEnqueuedPackets);
    j.Field("dequeued", st.nTotalDequeuedPackets);
    j.Field("received", st.nTotalReceivedPackets);
    j.Field("dropped", st.nTotalDroppedPackets);
    j.Key("dropped_by_reason");
    j.BeginObject();
    for (const auto& kv : st.nDroppedPacketsBeforeEnqueue)
    {
        j.Field(kv.first, kv.second);
    }
    for (const auto& kv : st.nDroppedPacketsAfterDequeue)
    {
        j.Field(kv.first + " (after dequeue)", kv.second);
    }
    j.EndObject();
    if (sc.queue == "red")
    {
        j.Field("red_unforced_drops", st.GetNDroppedPackets(RedQueueDisc::UNFORCED_DROP));
        j.Field("red_forced_drops", st.GetNDroppedPackets(RedQueueDisc::FORCED_DROP));
    }
    j.Field("queue_limit_drops",
            st.GetNDroppedPackets(sc.queue == "red" ? QueueDisc::INTERNAL_QUEUE_DROP
                                                    : FifoQueueDisc::LIMIT_EXCEEDED_DROP));
    j.Field("marked", st.nTotalMarkedPackets);
    j.Key("marked_by_reason");
    j.BeginObject();
    for (const auto& kv : st.nMarkedPackets)
    {
        j.Field(kv.first, kv.second);
    }
    j.EndObject();
    j.Field("queue_samples", sampler.samples);
    j.Field("mean_queue_pkts",
            sampler.samples ? static_cast<double>(sampler.sum) / sampler.samples : 0.0);
    j.Field("mean_queue_pkts_after_warmup",
            sampler.samplesAfterWarmup
                ? static_cast<double>(sampler.sumAfterWarmup) / sampler.samplesAfterWarmup
                : 0.0);
    j.Field("max_queue_pkts", sampler.max);
    j.Field("link_tx_packets", bnLink.packets);
    j.Field("link_tx_bytes", bnLink.bytes);
    j.Field("utilisation", bnLink.bytes * 8.0 / (bnRate * simEnd));
    if (warmup > 0 && warmup < sc.duration)
    {
        j.Field("utilisation_after_warmup",
                (bnLink.bytes - snap.bytesAtWarmup) * 8.0 / (bnRate * (simEnd - warmup)));
    }
    else
    {
        j.NullField("utilisation_after_warmup");
    }
    if (queueSeries)
    {
        j.Key("queue_series_pkts");
        j.BeginArray();
        for (uint32_t v : sampler.series)
        {
            j.Value(v);
        }
        j.EndArray();
    }
    j.EndObject();

    j.Field("total_bytes_received", totalRx);
    j.Field("goodput_bps", totalRx * 8.0 / simEnd);
    j.Field("other_queue_drops", otherDrops);

    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    j.Field("peak_rss_kb", static_cast<int64_t>(ru.ru_maxrss));
    j.EndObject();

    Simulator::Destroy();

    std::string text = j.str();
    if (out.empty())
    {
        std::cout << text << std::endl;
    }
    else
    {
        std::string tmp = out + ".tmp";
        {
            std::ofstream f(tmp);
            if (!f)
            {
                std::cerr << "error: cannot write " << tmp << std::endl;
                return 1;
            }
            f << text << '\n';
        }
        if (std::rename(tmp.c_str(), out.c_str()) != 0)
        {
            std::cerr << "error: cannot rename " << tmp << " to " << out << std::endl;
            return 1;
        }
    }
    return 0;
}
