// The ns-3 half of benchmarks/peers/ns3_dctcp.py, compiled at run time by ns-3's own Python bindings (cppyy):
// a DCTCP leaf-spine built from ns-3's stock models, one BulkSend/PacketSink pair per flow of the trace, and
// per-flow completion times read from the sinks' Rx trace. Written for this benchmark; parameters come from
// the Python side, which takes them from the fctlab experiment.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <vector>

namespace fctlab_peer
{
using namespace ns3;

struct FlowState
{
    uint64_t size = 0;
    uint64_t received = 0;
    int64_t startNs = -1;     // the trace's start time
    int64_t firstSendNs = -1; // the first data handed to the socket: the handshake is over
    int64_t finishNs = -1;    // the last byte received
};

static std::vector<FlowState> g_flows;

static void
OnRx(uint32_t idx, Ptr<const Packet> p, const Address&)
{
    FlowState& f = g_flows[idx];
    f.received += p->GetSize();
    if (f.finishNs < 0 && f.received >= f.size)
    {
        f.finishNs = Simulator::Now().GetNanoSeconds();
    }
}

static void
OnTx(uint32_t idx, Ptr<const Packet>)
{
    FlowState& f = g_flows[idx];
    if (f.firstSendNs < 0)
    {
        f.firstSendNs = Simulator::Now().GetNanoSeconds();
    }
}

struct Params
{
    uint32_t leaves, hostsPerLeaf, spines;
    double hostGbps, coreGbps, hostDelayNs, coreDelayNs;
    uint32_t bufferBytes, ecnBytes, mss, initCwnd;
    double rtoMinUs, dctcpG, alphaInit;
    bool spray;
    uint32_t seed;
    double stopSeconds;
};

static double g_runWall = 0;
static uint64_t g_events = 0;

// Returns the number of flows that finished; per-flow results are read with Result().
uint32_t
Run(const Params& P,
    const std::vector<uint32_t>& src,
    const std::vector<uint32_t>& dst,
    const std::vector<uint64_t>& size,
    const std::vector<int64_t>& startNs)
{
    RngSeedManager::SetSeed(P.seed);
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpDctcp::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(P.mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(P.initCwnd));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1u << 30));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1u << 30));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MicroSeconds(P.rtoMinUs)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(NanoSeconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpDctcp::DctcpShiftG", DoubleValue(P.dctcpG));
    Config::SetDefault("ns3::TcpDctcp::DctcpAlphaOnInit", DoubleValue(P.alphaInit));
    // RED as a step marker on the instantaneous queue: weight 1, min = max threshold = K bytes, no gentle ramp,
    // marking (never dropping) above K, tail drop at the buffer
    Config::SetDefault("ns3::RedQueueDisc::UseEcn", BooleanValue(true));
    Config::SetDefault("ns3::RedQueueDisc::UseHardDrop", BooleanValue(false));
    Config::SetDefault("ns3::RedQueueDisc::Gentle", BooleanValue(false));
    Config::SetDefault("ns3::RedQueueDisc::QW", DoubleValue(1.0));
    Config::SetDefault("ns3::RedQueueDisc::MeanPktSize", UintegerValue(P.mss + 40));
    Config::SetDefault("ns3::RedQueueDisc::MinTh", DoubleValue(P.ecnBytes));
    Config::SetDefault("ns3::RedQueueDisc::MaxTh", DoubleValue(P.ecnBytes));
    Config::SetDefault("ns3::RedQueueDisc::MaxSize",
                       QueueSizeValue(QueueSize(QueueSizeUnit::BYTES, P.bufferBytes)));
    Config::SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", BooleanValue(P.spray));

    uint32_t nHosts = P.leaves * P.hostsPerLeaf;
    NodeContainer hosts, leaves, spines;
    hosts.Create(nHosts);
    leaves.Create(P.leaves);
    spines.Create(P.spines);
    InternetStackHelper stack;
    stack.Install(hosts);
    stack.Install(leaves);
    stack.Install(spines);

    TrafficControlHelper red;
    red.SetRootQueueDisc("ns3::RedQueueDisc");
    PointToPointHelper hostLink, coreLink;
    hostLink.SetDeviceAttribute("DataRate", DataRateValue(DataRate(uint64_t(P.hostGbps * 1e9))));
    hostLink.SetChannelAttribute("Delay", TimeValue(NanoSeconds(P.hostDelayNs)));
    hostLink.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
    coreLink.SetDeviceAttribute("DataRate", DataRateValue(DataRate(uint64_t(P.coreGbps * 1e9))));
    coreLink.SetChannelAttribute("Delay", TimeValue(NanoSeconds(P.coreDelayNs)));
    coreLink.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));

    Ipv4AddressHelper addr;
    std::vector<Ipv4Address> hostAddr(nHosts);
    uint32_t subnet = 0;
    auto nextBase = [&subnet]() {
        uint32_t s = subnet++;
        return Ipv4Address((10u << 24) | ((s >> 8) << 16) | ((s & 0xff) << 8));
    };
    for (uint32_t h = 0; h < nHosts; ++h)
    {
        NetDeviceContainer d = hostLink.Install(hosts.Get(h), leaves.Get(h / P.hostsPerLeaf));
        red.Install(d);
        addr.SetBase(nextBase(), "255.255.255.0");
        Ipv4InterfaceContainer ifc = addr.Assign(d);
        hostAddr[h] = ifc.GetAddress(0);
    }
    for (uint32_t l = 0; l < P.leaves; ++l)
    {
        for (uint32_t s = 0; s < P.spines; ++s)
        {
            NetDeviceContainer d = coreLink.Install(leaves.Get(l), spines.Get(s));
            red.Install(d);
            addr.SetBase(nextBase(), "255.255.255.0");
            addr.Assign(d);
        }
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    g_flows.assign(src.size(), FlowState{});
    for (uint32_t i = 0; i < src.size(); ++i)
    {
        g_flows[i].size = size[i];
        g_flows[i].startNs = startNs[i];
        uint16_t port = 1024 + (i % 60000);
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sink.Install(hosts.Get(dst[i]));
        sa.Start(NanoSeconds(0));
        sa.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, i));
        BulkSendHelper send("ns3::TcpSocketFactory", InetSocketAddress(hostAddr[dst[i]], port));
        send.SetAttribute("MaxBytes", UintegerValue(size[i]));
        send.SetAttribute("SendSize", UintegerValue(64 * P.mss));
        ApplicationContainer ca = send.Install(hosts.Get(src[i]));
        ca.Start(NanoSeconds(startNs[i]));
        ca.Get(0)->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, i));
    }

    Simulator::Stop(Seconds(P.stopSeconds));
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    g_runWall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    g_events = 0;
    uint32_t done = 0;
    for (const auto& f : g_flows)
    {
        done += f.finishNs >= 0;
    }
    Simulator::Destroy();
    return done;
}

double RunWallSeconds() { return g_runWall; }
int64_t FinishNs(uint32_t i) { return g_flows[i].finishNs; }
int64_t FirstSendNs(uint32_t i) { return g_flows[i].firstSendNs; }

} // namespace fctlab_peer
