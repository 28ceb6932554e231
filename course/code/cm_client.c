// zh: cm_client.c：用 RDMA CM（librdmacm）建 RC 连接的主动端，不需要自己写 TCP 交换。
// en: cm_client.c: the active side of an RC connection set up with the RDMA CM (librdmacm), with no TCP exchange of our own.
// zh: 地址解析借用本机 IP 协议栈；REQ/REP/RTU 经由 RDMA 网络上的 QP1 传递，所有 modify_qp 都由 CM 代劳。
// en: Address resolution borrows the host's IP stack; REQ/REP/RTU travel over the RDMA fabric through QP1, and the CM does every modify_qp.
// zh: 本端缓冲区的地址和 rkey 放在 REQ 的私有数据里；服务端据此把一条消息 WRITE_WITH_IMM 进来，客户端打印后断开连接。
// en: Our buffer's address and rkey ride in the REQ's private data; the server WRITE_WITH_IMMs a message into it, and the client prints it and disconnects.
// zh: 仿真器不模拟 RDMA CM（地址与路由解析、QP1 上的 REQ/REP/RTU），所以本程序没有对应的会话，也没有“在演练场打开”按钮。
// en: The simulator does not model the RDMA CM (address and route resolution, REQ/REP/RTU over QP1), so this program has no session and no "open in the playground" button.
// playground: none
//
// zh: 编译：
// en: Build:
//   gcc -O2 -Wall -o cm_client cm_client.c -lrdmacm -libverbs
// zh: 运行（先在服务端起 cm_server）：
// en: Run (start cm_server on the server first):
//   server$ ./cm_server [PORT]
//   client$ ./cm_client SERVER_IP [PORT]
// zh: PORT 默认 7471。设备、端口和 GID 都由 CM 根据 IP 地址和路由表选出。
// en: PORT defaults to 7471. The CM picks the device, port and GID from the IP address and the routing table.

#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define BUF_SIZE 4096
#define CQ_DEPTH 16
#define DEFAULT_PORT "7471"

// zh: 放进私有数据的 16 字节：缓冲区地址、rkey、长度，全部网络字节序（大端）。
// en: The 16 bytes carried as private data: buffer address, rkey, length, all network byte order (big-endian).
struct mr_info {
    uint64_t addr;
    uint32_t rkey;
    uint32_t len;
};

// zh: 返回 NULL 或 -1 并设置 errno 的调用（librdmacm 全是这样）用这个报错。
// en: For calls that return NULL or -1 and set errno (all of librdmacm does).
static void fail_errno(const char *call)
{
    fprintf(stderr, "%s failed: %s (errno %d)\n", call, strerror(errno), errno);
    exit(1);
}

// zh: verbs 的销毁函数直接返回 errno 的值（不是 -1），用这个报错。
// en: The verbs destroy calls return the errno value itself (not -1).
static void fail_ret(const char *call, int ret)
{
    fprintf(stderr, "%s failed: %s (%d)\n", call, strerror(ret), ret);
    exit(1);
}

static void die(const char *msg)
{
    fprintf(stderr, "%s\n", msg);
    exit(1);
}

static uint8_t min_u8(int a, int b)
{
    int m = a < b ? a : b;
    return (uint8_t)(m < 0 ? 0 : m > 255 ? 255 : m);
}

// zh: 忙轮询一条完成，先查 status；出错时只有 wr_id、status、qp_num、vendor_err 可信。
// en: Busy-poll one completion and check status first; on an error only wr_id, status, qp_num and vendor_err are valid.
static struct ibv_wc poll_one(struct ibv_cq *cq)
{
    struct ibv_wc wc;
    int n;
    do {
        n = ibv_poll_cq(cq, 1, &wc);
    } while (n == 0);
    if (n < 0)
        die("ibv_poll_cq failed");
    if (wc.status != IBV_WC_SUCCESS) {
        fprintf(stderr, "WR %" PRIu64 " failed: %s (vendor_err 0x%x)\n", wc.wr_id,
                ibv_wc_status_str(wc.status), wc.vendor_err);
        exit(1);
    }
    return wc;
}

// region: events
// zh: 从事件通道取下一个事件，它必须是 want；需要时把私有数据拷到 pdata（len 字节）。
// en: Take the next event from the channel; it must be want. Copy len bytes of private data to pdata if asked.
static void wait_event(struct rdma_event_channel *ec, enum rdma_cm_event_type want, void *pdata,
                       size_t len)
{
    struct rdma_cm_event *ev;
    if (rdma_get_cm_event(ec, &ev))
        fail_errno("rdma_get_cm_event");
    // zh: DREQ 超时后的 DISCONNECTED 带非 0 的 status，这对拆除无碍；其余事件 status 必须为 0。
    // en: A DISCONNECTED after a DREQ timeout has a non-zero status, harmless for teardown; other events need status 0.
    if (ev->event != want || (ev->status && want != RDMA_CM_EVENT_DISCONNECTED)) {
        fprintf(stderr, "expected %s, got %s (status %d)\n", rdma_event_str(want),
                rdma_event_str(ev->event), ev->status);
        exit(1);
    }
    // zh: 私有数据属于这个事件，确认之后就被释放，所以先拷出来。它可能比对方写的长，多出的部分是 0。
    // en: Private data belongs to the event and is freed by the ack, so copy it first. It may be longer than what the peer wrote, padded with zeros.
    if (pdata) {
        if (!ev->param.conn.private_data || ev->param.conn.private_data_len < len)
            die("the peer sent no (or too little) private data");
        memcpy(pdata, ev->param.conn.private_data, len);
    }
    // zh: 每个事件都必须确认；rdma_destroy_id 会一直等到这个 cm_id 的事件全部确认为止。
    // en: Every event must be acknowledged; rdma_destroy_id waits until all events of its cm_id are.
    if (rdma_ack_cm_event(ev))
        fail_errno("rdma_ack_cm_event");
}
// endregion: events

#define TIMEOUT_MS 2000
#define IMM_WR_ID 1

static void post_imm_slot(struct ibv_qp *qp)
{
    // zh: WRITE_WITH_IMM 只消耗一个接收 WR，不需要缓冲区。
    // en: A WRITE_WITH_IMM only consumes a receive WR and needs no buffer.
    struct ibv_recv_wr wr = { .wr_id = IMM_WR_ID, .sg_list = NULL, .num_sge = 0 }, *bad_wr;
    int ret = ibv_post_recv(qp, &wr, &bad_wr);
    if (ret)
        fail_ret("ibv_post_recv", ret);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s SERVER_IP [PORT]\n", argv[0]);
        return 2;
    }
    const char *server = argv[1], *port = argc > 2 ? argv[2] : DEFAULT_PORT;
    int ret;

// region: resolve
    // zh: 所有 CM 事件都从这个事件通道里取；它也带一个 fd，可以交给 poll/epoll。
    // en: Every CM event comes out of this event channel; it carries an fd too, usable with poll/epoll.
    struct rdma_event_channel *ec = rdma_create_event_channel();
    if (!ec)
        fail_errno("rdma_create_event_channel");
    // zh: cm_id 相当于 socket；RDMA_PS_TCP 表示可靠的面向连接服务，也就是 RC QP。
    // en: A cm_id is the counterpart of a socket; RDMA_PS_TCP means reliable connected service, that is an RC QP.
    struct rdma_cm_id *id;
    if (rdma_create_id(ec, &id, NULL, RDMA_PS_TCP))
        fail_errno("rdma_create_id");
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai;
    int gai = getaddrinfo(server, port, &hints, &ai);
    if (gai) {
        fprintf(stderr, "getaddrinfo(%s): %s\n", server, gai_strerror(gai));
        return 1;
    }
    // zh: 查本机路由表（必要时发 ARP），找到出口设备和端口，并由 IP 地址推出两端的 GID。
    // en: Consults the routing table (ARP if needed), finds the outgoing device and port, and derives both GIDs from the IPs.
    if (rdma_resolve_addr(id, NULL, ai->ai_addr, TIMEOUT_MS))
        fail_errno("rdma_resolve_addr");
    freeaddrinfo(ai);
    wait_event(ec, RDMA_CM_EVENT_ADDR_RESOLVED, NULL, 0);
    // zh: RoCE 上路由解析在本地完成（MTU、流量类别、hop limit 等），不发任何包。
    // en: On RoCE route resolution completes locally (MTU, traffic class, hop limit...) and sends nothing.
    if (rdma_resolve_route(id, TIMEOUT_MS))
        fail_errno("rdma_resolve_route");
    wait_event(ec, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL, 0);
// endregion: resolve

    // zh: 地址解析之后 id->verbs 就是选中的设备；PD、CQ、MR 都建在它上面。
    // en: After address resolution id->verbs is the chosen device; the PD, CQ and MR are created on it.
    struct ibv_device_attr dev_attr;
    if ((ret = ibv_query_device(id->verbs, &dev_attr)))
        fail_ret("ibv_query_device", ret);
    struct ibv_pd *pd = ibv_alloc_pd(id->verbs);
    if (!pd)
        fail_errno("ibv_alloc_pd");
    struct ibv_cq *cq = ibv_create_cq(id->verbs, CQ_DEPTH, NULL, NULL, 0);
    if (!cq)
        fail_errno("ibv_create_cq");
    char *buf = aligned_alloc(4096, BUF_SIZE);
    if (!buf)
        fail_errno("aligned_alloc");
    memset(buf, 0, BUF_SIZE);
    // zh: 服务端要往这里写：REMOTE_WRITE，以及它要求的 LOCAL_WRITE。
    // en: The server writes here: REMOTE_WRITE, plus the LOCAL_WRITE it requires.
    struct ibv_mr *mr = ibv_reg_mr(pd, buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (!mr)
        fail_errno("ibv_reg_mr");

// region: connect
    struct ibv_qp_init_attr qp_init = {
        .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
        .cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
    };
    // zh: rdma_create_qp 建 QP，并替你做 RESET→INIT。
    // en: rdma_create_qp creates the QP and does RESET→INIT for you.
    // zh: QP 的访问权限由 CM 设置：总是允许 REMOTE_WRITE；responder_resources 大于 0 时再加 REMOTE_READ 和 REMOTE_ATOMIC。
    // en: The CM sets the QP's access flags: REMOTE_WRITE always, plus REMOTE_READ and REMOTE_ATOMIC when responder_resources is above 0.
    if (rdma_create_qp(id, pd, &qp_init))
        fail_errno("rdma_create_qp");
    // zh: 服务端一进入 ESTABLISHED 就会写过来，所以接收 WR 要在连接之前就位。
    // en: The server writes as soon as it is ESTABLISHED, so the receive WR must be in place before connecting.
    post_imm_slot(id->qp);
    // zh: 地址和 rkey 不是 CM 的字段，放进 REQ 的私有数据（RDMA_PS_TCP 最多 56 字节）。
    // en: The address and rkey are not CM fields, so they go in the REQ's private data (at most 56 bytes for RDMA_PS_TCP).
    struct mr_info me = { htobe64((uintptr_t)buf), htonl(mr->rkey), htonl(BUF_SIZE) };
    struct rdma_conn_param param = {
        .private_data = &me,
        .private_data_len = sizeof me,
        // zh: 本端同时服务几个远端 READ/原子（responder_resources）、自己同时发出几个（initiator_depth）。
        // en: How many remote READs/atomics we serve at once (responder_resources) and issue at once (initiator_depth).
        .responder_resources = min_u8(dev_attr.max_qp_rd_atom, 4),
        .initiator_depth = min_u8(dev_attr.max_qp_init_rd_atom, 4),
        // zh: retry_count：两端超时后的重发次数；rnr_retry_count：对方遇到本端 RNR NAK 时重试几次（7 为无限）。
        // en: retry_count: resends after a timeout, both ends; rnr_retry_count: how often the peer retries our RNR NAKs (7 = forever).
        .retry_count = 7,
        .rnr_retry_count = 7,
    };
    // zh: 发出 REQ。REP 到达时库替你做 INIT→RTR→RTS，再发 RTU，然后报告 ESTABLISHED。
    // en: Sends the REQ. When the REP arrives the library does INIT→RTR→RTS, sends the RTU, then reports ESTABLISHED.
    if (rdma_connect(id, &param))
        fail_errno("rdma_connect");
    wait_event(ec, RDMA_CM_EVENT_ESTABLISHED, NULL, 0);
// endregion: connect
    printf("connected: local QP 0x%06x\n", id->qp->qp_num);

    // zh: 接收完成说明服务端写的数据已经在 buf 里；立即数是服务端放进去的序号（网络字节序）。
    // en: The receive completion means the server's data is in buf; the immediate is the number the server put in (network byte order).
    struct ibv_wc wc = poll_one(cq);
    if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || !(wc.wc_flags & IBV_WC_WITH_IMM))
        die("expected a receive completion with immediate data");
    printf("server wrote %u bytes (imm %u): \"%.*s\"\n", wc.byte_len, ntohl(wc.imm_data),
           (int)wc.byte_len, buf);

// region: disconnect
    // zh: rdma_disconnect 先把本端 QP 改到 ERR（InfiniBand 和 RoCE 上；iWARP 上改到 SQD），再发出 DREQ。
    // en: rdma_disconnect first moves our QP to ERR (on InfiniBand and RoCE; to SQD on iWARP), then sends a DREQ.
    if (rdma_disconnect(id))
        fail_errno("rdma_disconnect");
    // zh: 远端收到 DISCONNECTED 后也调用 rdma_disconnect，回 DREP；DREP 到达（或 DREQ 超时）时本端收到 DISCONNECTED。
    // en: The peer, on its DISCONNECTED, calls rdma_disconnect too and answers with a DREP; when it arrives (or the DREQ times out) we get DISCONNECTED.
    wait_event(ec, RDMA_CM_EVENT_DISCONNECTED, NULL, 0);
    // zh: 唯一的接收 WR 已经完成，ERR 里没有要排空的 WR。接着按创建的反顺序拆除。
    // en: The only receive WR has completed, so nothing is left to drain in ERR. Then tear down in reverse order of creation.
    rdma_destroy_qp(id);
    if ((ret = ibv_destroy_cq(cq)))
        fail_ret("ibv_destroy_cq", ret);
    if ((ret = ibv_dereg_mr(mr)))
        fail_ret("ibv_dereg_mr", ret);
    free(buf);
    if ((ret = ibv_dealloc_pd(pd)))
        fail_ret("ibv_dealloc_pd", ret);
    // zh: rdma_destroy_id 要等这个 cm_id 的事件全部确认；事件通道最后销毁。
    // en: rdma_destroy_id waits until every event of the cm_id is acknowledged; the event channel goes last.
    if (rdma_destroy_id(id))
        fail_errno("rdma_destroy_id");
    rdma_destroy_event_channel(ec);
// endregion: disconnect
    return 0;
}
