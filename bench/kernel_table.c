/* kernel_table.c — docs/COMPUTE.md's kernel-level table: the shipped calibrations' kernel models
 * (model/kernels) against published GEMM and FlashAttention timings, fit points and held-out
 * points apart, median |error| per GPU over the held-out ones. Not a benchmark: `make bench` builds
 * it (so it keeps compiling) but does not run it; from the repository root:
 *   make build/bench/kernel_table && build/bench/kernel_table */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include "../model/cost.h"
static spec_cluster C; static cost_calib K; static kern_calib KK; static double HBM;
static void load(const char*n){ sc_err e; char p[256]; snprintf(p,256,"configs/clusters/%s.json",n);
 if(spec_load_cluster(p,&C,&e)){printf("%s\n",e.text);exit(1);} snprintf(p,256,"configs/calibrations/%s.json",n);
 if(cost_calib_load(p,&K,&e)){printf("%s\n",e.text);exit(1);} KK=K.kern; HBM=C.gpu.hbm_bw_Bps*K.hbm_eff.v;
 C.gpu.clock_ratio=1; /* the published points are short bursts: compare at burst clock (the cluster's sustained clock_ratio is for whole steps) */}
static double gemm_tf(kern_dtype d,double m,double n,double k,double b){ double eb=d==KD_FP32||d==KD_TF32?4:2;
 return 2*m*n*k*b/kern_gemm_time(&KK,&C,d,m,n,k,b,eb,HBM)/1e12;}
static double best_sq(kern_dtype d){double mx=0; int s[]={1024,2048,4096,8192,10240}; for(int i=0;i<5;i++){double t=gemm_tf(d,s[i],s[i],s[i],1); if(t>mx)mx=t;} return mx;}
static double fa_tf(int v,double B,double H,double s,double d,int causal,int bwd){
 double t= v==3? kern_flash3_time(&KK,&C,B*H,s,d,causal,bwd):kern_flash_time(&KK,&C,B*H,s,d,causal,bwd);
 return kern_attn_flops(B*H,s,d,causal,bwd)/t/1e12;}
static double errs[64]; static int ne;
static void row(const char*what,double pred,double meas,const char*src,int held){
 double e=100*(pred/meas-1); printf("| %s | %.1f | %.1f | %+.1f%% | %s | %s |\n",what,meas,pred,e,held?"held out":"fit",src);
 if(held) errs[ne++]=fabs(e);}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
static void med(const char*g){ qsort(errs,ne,sizeof(double),cmp); double m= ne%2?errs[ne/2]:(errs[ne/2-1]+errs[ne/2])/2; printf("\n**%s: median |error| over %d held-out points: %.1f%%**\n\n",g,ne,m); ne=0;}
int main(void){
 const char*Z="zzc0721/torch-performance-test-data#79";
 puts("### H100 SXM (dgx-h100 calibration)\n\n| kernel | published TFLOPS | predicted | error | use | source |\n|---|---|---|---|---|---|");
 load("dgx-h100");
 row("GEMM bf16 4096^3",gemm_tf(KD_BF16,4096,4096,4096,1),788.7,Z,0);
 row("GEMM bf16 8192^3",gemm_tf(KD_BF16,8192,8192,8192,1),797.5,Z,0);
 row("GEMM bf16 2048x2048x13312 (MAMF)",gemm_tf(KD_BF16,2048,2048,13312,1),794.5,"stas00/ml-engineering MAMF table",0);
 row("GEMM bf16 2048^3 (fixed cost)",gemm_tf(KD_BF16,2048,2048,2048,1),676.6,Z,0);
 row("GEMM tf32 4096^3",gemm_tf(KD_TF32,4096,4096,4096,1),402.2,Z,0);
 row("GEMM bf16 1024^3",gemm_tf(KD_BF16,1024,1024,1024,1),176.6,Z,1);
 row("GEMM bf16 10240^3",gemm_tf(KD_BF16,10240,10240,10240,1),719.7,Z,1);
 row("GEMM fp16 4096^3",gemm_tf(KD_FP16,4096,4096,4096,1),760.0,Z,1);
 row("GEMM fp16 best square (1024..10240)",best_sq(KD_FP16),761.84,"zzc0721 database.md (H100 80GB HBM3, HaxxorCialtion)",1);
 row("GEMM bf16 best square (1024..10240)",best_sq(KD_BF16),783.66,"zzc0721 database.md (H100 80GB HBM3, clow1710)",1);
 row("GEMM fp32 best square",best_sq(KD_FP32),52.11,"zzc0721 database.md (clow1710)",1);
 row("FA2 fwd d128 s8192 16h x2",fa_tf(2,2,16,8192,128,0,0),369.9,"flash-attention PR #1791",0);
 row("FA2 fwd causal d128 s8192",fa_tf(2,2,16,8192,128,1,0),284.1,"flash-attention PR #1791",0);
 row("FA2 bwd d128 s8192",fa_tf(2,2,16,8192,128,0,1),290.6,"flash-attention PR #1791",0);
 row("FA2 bwd causal d128 s8192",fa_tf(2,2,16,8192,128,1,1),287.1,"flash-attention PR #1791",1);
 row("FA3 fwd d128 s8192",fa_tf(3,2,16,8192,128,0,0),659.1,"flash-attention PR #1791",0);
 row("FA3 fwd causal d128 s8192",fa_tf(3,2,16,8192,128,1,0),630.0,"flash-attention PR #1791",0);
 row("FA3 bwd d128 s8192",fa_tf(3,2,16,8192,128,0,1),553.9,"flash-attention PR #1791",0);
 row("FA3 bwd causal d128 s8192",fa_tf(3,2,16,8192,128,1,1),531.6,"flash-attention PR #1791",1);
 row("FA3 fwd d128 (32,16,512)",fa_tf(3,32,16,512,128,0,0),430.32,"pytorch/benchmark PR #2391",0);
 {double B[]={16,8,4,2,1},S[]={1024,2048,4096,8192,16384},T[]={517.099,565.544,590.233,614.234,620.73};
  for(int i=0;i<5;i++){char w[64];snprintf(w,64,"FA3 fwd d128 (%g,16,%g)",B[i],S[i]);row(w,fa_tf(3,B[i],16,S[i],128,0,0),T[i],"pytorch/benchmark PR #2391",1);}}
 {double B[]={32,16,8,4,2},S[]={512,1024,2048,4096,8192},F[]={252.53,295.27,310.09,310.32,306.62},Bw[]={189.25,239.06,257.43,279.80,299.81};
  for(int i=0;i<5;i++){char w[64];snprintf(w,64,"FA2 fwd d64 (%g,32,%g)",B[i],S[i]);row(w,fa_tf(2,B[i],32,S[i],64,0,0),F[i],"flash-attention PR #2688 (GPU inferred H100)",i!=4);
   snprintf(w,64,"FA2 bwd d64 (%g,32,%g)",B[i],S[i]);row(w,fa_tf(2,B[i],32,S[i],64,0,1),Bw[i],"flash-attention PR #2688 (GPU inferred H100)",i!=4 && i!=0);}}
 med("H100");
 puts("### A100 SXM4 80GB (dgx-a100 calibration)\n\n| kernel | published TFLOPS | predicted | error | use | source |\n|---|---|---|---|---|---|");
 load("dgx-a100");
 row("GEMM bf16 1024x10240x5120 (MAMF)",gemm_tf(KD_BF16,1024,10240,5120,1),271.2,"stas00/ml-engineering MAMF table",0);
 row("GEMM fp32 best square",best_sq(KD_FP32),19.18,"zzc0721 database.md (A100 SXM4 80GB)",0);
 row("bmm fp16 512 x (1024x1024 . 1024x128)",gemm_tf(KD_FP16,1024,128,1024,512),132.46,"pytorch/pytorch#83272 (CUDA 11.7)",1);
 row("GEMM bf16 best square",best_sq(KD_BF16),264.53,"zzc0721 database.md (A100 SXM4 80GB)",1);
 row("GEMM fp16 best square",best_sq(KD_FP16),258.74,"zzc0721 database.md (A100 SXM4 80GB)",1);
 row("GEMM bf16 best square (A800 SXM4 80GB)",best_sq(KD_BF16),266.48,"zzc0721 database.md (A800: A100 with capped NVLink)",1);
 row("GEMM bf16 best square (A100 40GB)",best_sq(KD_BF16),246.33,"zzc0721 database.md (A100 40GB, container)",1);
 row("FA2 fwd d128 (16,32,1024)",fa_tf(2,16,32,1024,128,0,0),177.67,"liangan1/GPU_travel flash-attn README",0);
 row("FA2 fwd d128 (1,32,4096)",fa_tf(2,1,32,4096,128,0,0),185.64,"liangan1/GPU_travel",0);
 row("FA2 fwd causal d128 (16,32,1024)",fa_tf(2,16,32,1024,128,1,0),143.70,"liangan1/GPU_travel",0);
 row("FA2 fwd causal d128 (1,32,4096)",fa_tf(2,1,32,4096,128,1,0),156.27,"liangan1/GPU_travel",0);
 row("FA2 fwd d128 (16,32,1024) GQA kv 8",fa_tf(2,16,32,1024,128,0,0),180.91,"liangan1/GPU_travel",1);
 row("FA2 fwd d128 (1,32,4096) GQA kv 8",fa_tf(2,1,32,4096,128,0,0),187.13,"liangan1/GPU_travel",1);
 row("FA2 fwd causal (16,32,1024) GQA kv 8",fa_tf(2,16,32,1024,128,1,0),140.59,"liangan1/GPU_travel",1);
 row("FA2 fwd causal (1,32,4096) GQA kv 8",fa_tf(2,1,32,4096,128,1,0),159.41,"liangan1/GPU_travel",1);
 med("A100");
 puts("### V100 SXM2 (p3dn.24xlarge calibration)\n\n| kernel | published TFLOPS | predicted | error | use | source |\n|---|---|---|---|---|---|");
 load("p3dn.24xlarge");
 C.gpu.peak_flops=130e12; C.gpu.peak_fp32_flops=16.4e12; 
 row("GEMM fp16 best square (V100S, 130 TF)",best_sq(KD_FP16),88.92,"zzc0721 database.md (Tesla V100S 32GB)",0);
 row("GEMM fp32 best square (V100S)",best_sq(KD_FP32),13.55,"zzc0721 database.md",0);
 load("p3dn.24xlarge");
 row("cublasHgemm best (V100)",best_sq(KD_FP16),85.0,"hma02/cublasHgemm-P100 PR #1 ('up to 85 Tflops')",1);
 row("cuBLAS f16 at m=2048 (V100, 95-100)",best_sq(KD_FP16),97.5,"lablup/mlxcel#1654 (shape partly given)",1);
 row("cuBLAS f32 at m=2048 (V100)",best_sq(KD_FP32),14.0,"lablup/mlxcel#1654",1);
 med("V100");
}
