# fsdp_gradpath.py - one-GPU microbenchmark behind issue 27 items 3 and 7 (not part of make check).
# Part 1: FSDP1's per-micro-step gradient path on one FlatParameter (pytorch/pytorch
# torch/distributed/fsdp/_runtime_utils.py _post_backward_hook / _reduce_grad): flat-gradient
# assembly (cat of the views' gradients), cast to reduce_dtype, in-place pre-divide, then the
# shard's post-divide and accumulation (the reduce-scatter itself left out: one GPU). Timed alone
# and on a side stream beside backward-sized GEMMs (dgrad + wgrad of Llama-3-8B's w1 at 8192
# tokens) on the default stream, alternating 7 times: exposed = (t_both - t_gemm) / t_path.
# Part 2: torch.optim.AdamW fused / foreach / for-loop over 72 fp32 tensors (8 blocks).
# Run: python3 bench/fsdp_gradpath.py > out.json. Results: bench/results/fsdp_gradpath-h100.json.
import json,time,torch,statistics as st
D='cuda';B=torch.bfloat16
def T(f,r=30):
 f();torch.cuda.synchronize();t=time.perf_counter()
 for _ in range(r):f()
 torch.cuda.synchronize();return (time.perf_counter()-t)/r
def gp(P,rd,A):
 x=torch.cat([p.reshape(-1) for p in P])
 if rd!=x.dtype:x=x.to(rd)
 x.div_(4.);s=x[:x.numel()//8].clone();s.div_(2.);A.add_(s)
h,k,f=4096,1024,14336;S=[(h,h),(k,h),(k,h),(h,h),(f,h),(f,h),(h,f),(h,),(h,)]
P=[torch.randn(s,device=D,dtype=B) for s in S];n=sum(p.numel() for p in P)
o={'gpu':torch.cuda.get_device_name(0),'torch':torch.__version__,'cuda':torch.version.cuda,'params':n}
b=torch.empty(1<<30,device=D,dtype=B);c=torch.empty_like(b)
o['copy_GBps']=4*b.numel()/T(lambda:c.copy_(b))/1e9;del b,c
A=torch.zeros(n//8,device=D)
x=torch.randn(8192,h,device=D,dtype=B);w=torch.randn(f,h,device=D,dtype=B);dy=torch.randn(8192,f,device=D,dtype=B)
def G():
 for _ in range(2):torch.mm(dy,w);torch.mm(dy.t(),x)
sd=torch.cuda.Stream()
for nm,rd in(('bf16',B),('fp32',torch.float32)):
 R=[]
 for i in range(7):
  tp=T(lambda:gp(P,rd,A));tg=T(G)
  def both():
   sd.wait_stream(torch.cuda.current_stream())
   with torch.cuda.stream(sd):gp(P,rd,A)
   G();torch.cuda.current_stream().wait_stream(sd)
  tb=T(both);tg2=T(G);R.append(((tb-(tg+tg2)/2)/tp,tp))
 tp=st.median(r[1] for r in R)
 o[nm]={'path_s':tp,'B_per_param_at_copy_rate':tp*o['copy_GBps']*1e9/n,'exposed_median':st.median(r[0] for r in R),'exposed_all':[round(r[0],3) for r in R]}
for im in('fused','foreach','forloop'):
 ps=[torch.nn.Parameter(torch.randn(s,device=D)) for s in S*8]
 for p in ps:p.grad=torch.randn_like(p)
 kw={'fused':True} if im=='fused' else {'foreach':im=='foreach'}
 op=torch.optim.AdamW(ps,lr=1e-4,weight_decay=.1,**kw);t=T(op.step,10);m=sum(p.numel() for p in ps)
 o[im]={'s':t,'B_per_param_at_copy_rate':t*o['copy_GBps']*1e9/m,'tensors':len(ps)};del op,ps;torch.cuda.empty_cache()
print(json.dumps(o,indent=1))
