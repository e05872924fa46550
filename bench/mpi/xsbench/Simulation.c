#include "XSbench_header.h"

////////////////////////////////////////////////////////////////////////////////////
// BASELINE FUNCTIONS
////////////////////////////////////////////////////////////////////////////////////
// All "baseline" code is at the top of this file. The baseline code is a simple
// implementation of the algorithm, with only minor CPU optimizations in place.
// Following these functions are a number of optimized variants,
// which each deploy a different combination of optimizations strategies. By
// default, XSBench will only run the baseline implementation. Optimized variants
// are not yet implemented for this OpenMP targeting offload port.
////////////////////////////////////////////////////////////////////////////////////

#ifdef XS_SPREAD
// ---- omptarget-rs change (built with -DXS_SPREAD) --------------------------
// Spreads the event-based lookups over several OpenMP devices, e.g. remote
// devices of omptarget-rs-device MPI ranks:
//   XS_DEVICES=4,5,6   devices to use, round robin (default: the default device)
//   XS_CHUNKS=n        chunks of lookups (default: one per device)
// The read-only data is mapped to each device once, before the lookups
// (xs_spread_begin); each chunk then maps only its slice of "verification".
// The hash is a sum over lookups, so the order of chunks does not change it.
#define XS_MAX_DEVICES 64
typedef struct{
	int ndev;
	int devs[XS_MAX_DEVICES];
	int nchunks;
	double t0, t_mapped;
} XSSpread;

static XSSpread xs_spread_begin( Inputs in, SimulationData SD )
{
	XSSpread sp;
	sp.ndev = 0;
	const char * env = getenv("XS_DEVICES");
	int num_devices = omp_get_num_devices();
	if( env == NULL || *env == '\0' )
		sp.devs[sp.ndev++] = omp_get_default_device();
	else
	{
		const char * p = env;
		while( *p )
		{
			char * end;
			long d = strtol(p, &end, 10);
			if( end == p || d < 0 || d >= num_devices || sp.ndev == XS_MAX_DEVICES )
			{
				printf("Error: XS_DEVICES=%s: want device numbers 0..%d, comma separated\n", env, num_devices - 1);
				exit(1);
			}
			sp.devs[sp.ndev++] = (int) d;
			p = (*end == ',') ? end + 1 : end;
		}
	}
	const char * chunks = getenv("XS_CHUNKS");
	sp.nchunks = chunks ? atoi(chunks) : sp.ndev;
	if( sp.nchunks < 1 || sp.nchunks > in.lookups )
	{
		printf("Error: XS_CHUNKS must be 1..lookups\n");
		exit(1);
	}
	printf("XS spread: devices %s (of %d), %d chunks\n", (env && *env) ? env : "default", num_devices, sp.nchunks);
	sp.t0 = omp_get_wtime();
	// Map the read-only data to all devices at once (one host thread each).
	#pragma omp parallel num_threads(sp.ndev)
	{
		int dev = sp.devs[omp_get_thread_num()];
		#pragma omp target enter data device(dev)\
		map(to: SD.num_nucs[:SD.length_num_nucs])\
		map(to: SD.concs[:SD.length_concs])\
		map(to: SD.mats[:SD.length_mats])\
		map(to: SD.unionized_energy_array[:SD.length_unionized_energy_array])\
		map(to: SD.index_grid[:SD.length_index_grid])\
		map(to: SD.nuclide_grid[:SD.length_nuclide_grid])
	}
	sp.t_mapped = omp_get_wtime();
	return sp;
}

static void xs_spread_end( XSSpread * sp, SimulationData SD )
{
	double t_done = omp_get_wtime();
	#pragma omp parallel num_threads(sp->ndev)
	{
		int dev = sp->devs[omp_get_thread_num()];
		#pragma omp target exit data device(dev)\
		map(delete: SD.num_nucs[:SD.length_num_nucs])\
		map(delete: SD.concs[:SD.length_concs])\
		map(delete: SD.mats[:SD.length_mats])\
		map(delete: SD.unionized_energy_array[:SD.length_unionized_energy_array])\
		map(delete: SD.index_grid[:SD.length_index_grid])\
		map(delete: SD.nuclide_grid[:SD.length_nuclide_grid])
	}
	printf("XS spread: map once %.3f s, lookups %.3f s, unmap %.3f s\n",
	       sp->t_mapped - sp->t0, t_done - sp->t_mapped, omp_get_wtime() - t_done);
}
// ---- end of omptarget-rs change ---------------------------------------------
#endif

unsigned long long run_event_based_simulation(Inputs in, SimulationData SD, int mype)
{
	if( mype == 0)	
		printf("Beginning event based simulation...\n");
	
	////////////////////////////////////////////////////////////////////////////////
	// SUMMARY: Simulation Data Structure Manifest for "SD" Object
	// Here we list all heap arrays (and lengths) in SD that would need to be
	// offloaded manually if using an accelerator with a seperate memory space
	////////////////////////////////////////////////////////////////////////////////
	// int * num_nucs;                     // Length = length_num_nucs;
	// double * concs;                     // Length = length_concs
	// int * mats;                         // Length = length_mats
	// double * unionized_energy_array;    // Length = length_unionized_energy_array
	// int * index_grid;                   // Length = length_index_grid
	// NuclideGridPoint * nuclide_grid;    // Length = length_nuclide_grid
	// 
	// Note: "unionized_energy_array" and "index_grid" can be of zero length
	//        depending on lookup method.
	//
	// Note: "Lengths" are given as the number of objects in the array, not the
	//       number of bytes.
	////////////////////////////////////////////////////////////////////////////////


	////////////////////////////////////////////////////////////////////////////////
	// Begin Actual Simulation Loop 
	////////////////////////////////////////////////////////////////////////////////
	unsigned long long * verification = (unsigned long long *) malloc(in.lookups * sizeof(unsigned long long));

#ifndef XS_SPREAD
	#pragma omp target teams distribute parallel for\
	map(to: SD.max_num_nucs)\
	map(to: SD.num_nucs[:SD.length_num_nucs])\
	map(to: SD.concs[:SD.length_concs])\
	map(to: SD.mats[:SD.length_mats])\
	map(to: SD.unionized_energy_array[:SD.length_unionized_energy_array])\
	map(to: SD.index_grid[:SD.length_index_grid])\
	map(to: SD.nuclide_grid[:SD.length_nuclide_grid])\
  map(from: verification[:in.lookups])
	for( int i = 0; i < in.lookups; i++ )
#else
	// ---- omptarget-rs change: chunk c on device devs[c % ndev], one host
	// thread per device; the data below is already present (no copy) ----
	XSSpread sp = xs_spread_begin(in, SD);
	#pragma omp parallel num_threads(sp.ndev)
	for( int c = omp_get_thread_num(); c < sp.nchunks; c += sp.ndev )
	{
	int dev = sp.devs[omp_get_thread_num()];
	int lo = (int) ((long) in.lookups * c / sp.nchunks);
	int hi = (int) ((long) in.lookups * (c + 1) / sp.nchunks);
	#pragma omp target teams distribute parallel for device(dev)\
	map(to: SD.max_num_nucs)\
	map(to: SD.num_nucs[:SD.length_num_nucs])\
	map(to: SD.concs[:SD.length_concs])\
	map(to: SD.mats[:SD.length_mats])\
	map(to: SD.unionized_energy_array[:SD.length_unionized_energy_array])\
	map(to: SD.index_grid[:SD.length_index_grid])\
	map(to: SD.nuclide_grid[:SD.length_nuclide_grid])\
	map(from: verification[lo:hi-lo])
	for( int i = lo; i < hi; i++ )
	// ---- end of change: the loop body is upstream's ----
#endif
	{
		// Set the initial seed value
		uint64_t seed = STARTING_SEED;	

		// Forward seed to lookup index (we need 2 samples per lookup)
		seed = fast_forward_LCG(seed, 2*i);

		// Randomly pick an energy and material for the particle
		double p_energy = LCG_random_double(&seed);
		int mat         = pick_mat(&seed); 

		// debugging
		//printf("E = %lf mat = %d\n", p_energy, mat);

		double macro_xs_vector[5] = {0};
		
		// Perform macroscopic Cross Section Lookup
		calculate_macro_xs(
				p_energy,        // Sampled neutron energy (in lethargy)
				mat,             // Sampled material type index neutron is in
				in.n_isotopes,   // Total number of isotopes in simulation
				in.n_gridpoints, // Number of gridpoints per isotope in simulation
				SD.num_nucs,     // 1-D array with number of nuclides per material
				SD.concs,        // Flattened 2-D array with concentration of each nuclide in each material
				SD.unionized_energy_array, // 1-D Unionized energy array
				SD.index_grid,   // Flattened 2-D grid holding indices into nuclide grid for each unionized energy level
				SD.nuclide_grid, // Flattened 2-D grid holding energy levels and XS_data for all nuclides in simulation
				SD.mats,         // Flattened 2-D array with nuclide indices defining composition of each type of material
				macro_xs_vector, // 1-D array with result of the macroscopic cross section (5 different reaction channels)
				in.grid_type,    // Lookup type (nuclide, hash, or unionized)
				in.hash_bins,    // Number of hash bins used (if using hash lookup type)
				SD.max_num_nucs  // Maximum number of nuclides present in any material
				);

		// For verification, and to prevent the compiler from optimizing
		// all work out, we interrogate the returned macro_xs_vector array
		// to find its maximum value index, then increment the verification
		// value by that index. In this implementation, we prevent thread
		// contention by using an OMP reduction on the verification value.
		// For accelerators, a different approach might be required
		// (e.g., atomics, reduction of thread-specific values in large
		// array via CUDA thrust, etc).
		double max = -1.0;
		int max_idx = 0;
		for(int j = 0; j < 5; j++ )
		{
			if( macro_xs_vector[j] > max )
			{
				max = macro_xs_vector[j];
				max_idx = j;
			}
		}
		verification[i] = max_idx+1;
	}
#ifdef XS_SPREAD
	} // omptarget-rs change: closes the loop over chunks
	xs_spread_end(&sp, SD);
#endif

  // Reduce validation hash on the host
  unsigned long long validation_hash = 0;
	for( int i = 0; i < in.lookups; i++ )
    validation_hash += verification[i];

	return validation_hash;
}

// Calculates the microscopic cross section for a given nuclide & energy
void calculate_micro_xs(   double p_energy, int nuc, long n_isotopes,
                           long n_gridpoints,
                           double *  egrid, int *  index_data,
                           NuclideGridPoint *  nuclide_grids,
                           long idx, double *  xs_vector, int grid_type, int hash_bins ){
	// Variables
	double f;
	NuclideGridPoint * low, * high;

	// If using only the nuclide grid, we must perform a binary search
	// to find the energy location in this particular nuclide's grid.
	if( grid_type == NUCLIDE )
	{
		// Perform binary search on the Nuclide Grid to find the index
		idx = grid_search_nuclide( n_gridpoints, p_energy, &nuclide_grids[nuc*n_gridpoints], 0, n_gridpoints-1);

		// pull ptr from nuclide grid and check to ensure that
		// we're not reading off the end of the nuclide's grid
		if( idx == n_gridpoints - 1 )
			low = &nuclide_grids[nuc*n_gridpoints + idx - 1];
		else
			low = &nuclide_grids[nuc*n_gridpoints + idx];
	}
	else if( grid_type == UNIONIZED) // Unionized Energy Grid - we already know the index, no binary search needed.
	{
		// pull ptr from energy grid and check to ensure that
		// we're not reading off the end of the nuclide's grid
		if( index_data[idx * n_isotopes + nuc] == n_gridpoints - 1 )
			low = &nuclide_grids[nuc*n_gridpoints + index_data[idx * n_isotopes + nuc] - 1];
		else
			low = &nuclide_grids[nuc*n_gridpoints + index_data[idx * n_isotopes + nuc]];
	}
	else // Hash grid
	{
		// load lower bounding index
		int u_low = index_data[idx * n_isotopes + nuc];

		// Determine higher bounding index
		int u_high;
		if( idx == hash_bins - 1 )
			u_high = n_gridpoints - 1;
		else
			u_high = index_data[(idx+1)*n_isotopes + nuc] + 1;

		// Check edge cases to make sure energy is actually between these
		// Then, if things look good, search for gridpoint in the nuclide grid
		// within the lower and higher limits we've calculated.
		double e_low  = nuclide_grids[nuc*n_gridpoints + u_low].energy;
		double e_high = nuclide_grids[nuc*n_gridpoints + u_high].energy;
		int lower;
		if( p_energy <= e_low )
			lower = 0;
		else if( p_energy >= e_high )
			lower = n_gridpoints - 1;
		else
			lower = grid_search_nuclide( n_gridpoints, p_energy, &nuclide_grids[nuc*n_gridpoints], u_low, u_high);

		if( lower == n_gridpoints - 1 )
			low = &nuclide_grids[nuc*n_gridpoints + lower - 1];
		else
			low = &nuclide_grids[nuc*n_gridpoints + lower];
	}
	
	high = low + 1;
	
	// calculate the re-useable interpolation factor
	f = (high->energy - p_energy) / (high->energy - low->energy);

	// Total XS
	xs_vector[0] = high->total_xs - f * (high->total_xs - low->total_xs);
	
	// Elastic XS
	xs_vector[1] = high->elastic_xs - f * (high->elastic_xs - low->elastic_xs);
	
	// Absorbtion XS
	xs_vector[2] = high->absorbtion_xs - f * (high->absorbtion_xs - low->absorbtion_xs);
	
	// Fission XS
	xs_vector[3] = high->fission_xs - f * (high->fission_xs - low->fission_xs);
	
	// Nu Fission XS
	xs_vector[4] = high->nu_fission_xs - f * (high->nu_fission_xs - low->nu_fission_xs);
	
	//test
	/*
	if( omp_get_thread_num() == 0 )
	{
		printf("Lookup: Energy = %lf, nuc = %d\n", p_energy, nuc);
		printf("e_h = %lf e_l = %lf\n", high->energy , low->energy);
		printf("xs_h = %lf xs_l = %lf\n", high->elastic_xs, low->elastic_xs);
		printf("total_xs = %lf\n\n", xs_vector[1]);
	}
	*/
	
}

// Calculates macroscopic cross section based on a given material & energy 
void calculate_macro_xs( double p_energy, int mat, long n_isotopes,
                         long n_gridpoints, int *  num_nucs,
                         double *  concs,
                         double *  egrid, int *  index_data,
                         NuclideGridPoint *  nuclide_grids,
                         int *  mats,
                         double *  macro_xs_vector, int grid_type, int hash_bins, int max_num_nucs ){
	int p_nuc; // the nuclide we are looking up
	long idx = -1;	
	double conc; // the concentration of the nuclide in the material

	// cleans out macro_xs_vector
	for( int k = 0; k < 5; k++ )
		macro_xs_vector[k] = 0;

	// If we are using the unionized energy grid (UEG), we only
	// need to perform 1 binary search per macroscopic lookup.
	// If we are using the nuclide grid search, it will have to be
	// done inside of the "calculate_micro_xs" function for each different
	// nuclide in the material.
	if( grid_type == UNIONIZED )
		idx = grid_search( n_isotopes * n_gridpoints, p_energy, egrid);	
	else if( grid_type == HASH )
	{
		double du = 1.0 / hash_bins;
		idx = p_energy / du;
	}
	
	// Once we find the pointer array on the UEG, we can pull the data
	// from the respective nuclide grids, as well as the nuclide
	// concentration data for the material
	// Each nuclide from the material needs to have its micro-XS array
	// looked up & interpolatied (via calculate_micro_xs). Then, the
	// micro XS is multiplied by the concentration of that nuclide
	// in the material, and added to the total macro XS array.
	// (Independent -- though if parallelizing, must use atomic operations
	//  or otherwise control access to the xs_vector and macro_xs_vector to
	//  avoid simulataneous writing to the same data structure)
	for( int j = 0; j < num_nucs[mat]; j++ )
	{
		double xs_vector[5];
		p_nuc = mats[mat*max_num_nucs + j];
		conc = concs[mat*max_num_nucs + j];
		calculate_micro_xs( p_energy, p_nuc, n_isotopes,
		                    n_gridpoints, egrid, index_data,
		                    nuclide_grids, idx, xs_vector, grid_type, hash_bins );
		for( int k = 0; k < 5; k++ )
			macro_xs_vector[k] += xs_vector[k] * conc;
	}
	
	//test
	/*
	for( int k = 0; k < 5; k++ )
		printf("Energy: %lf, Material: %d, XSVector[%d]: %lf\n",
		       p_energy, mat, k, macro_xs_vector[k]);
			   */
}


// binary search for energy on unionized energy grid
// returns lower index
long grid_search( long n, double quarry, double *  A)
{
	long lowerLimit = 0;
	long upperLimit = n-1;
	long examinationPoint;
	long length = upperLimit - lowerLimit;

	while( length > 1 )
	{
		examinationPoint = lowerLimit + ( length / 2 );
		
		if( A[examinationPoint] > quarry )
			upperLimit = examinationPoint;
		else
			lowerLimit = examinationPoint;
		
		length = upperLimit - lowerLimit;
	}
	
	return lowerLimit;
}

// binary search for energy on nuclide energy grid
long grid_search_nuclide( long n, double quarry, NuclideGridPoint * A, long low, long high)
{
	long lowerLimit = low;
	long upperLimit = high;
	long examinationPoint;
	long length = upperLimit - lowerLimit;

	while( length > 1 )
	{
		examinationPoint = lowerLimit + ( length / 2 );
		
		if( A[examinationPoint].energy > quarry )
			upperLimit = examinationPoint;
		else
			lowerLimit = examinationPoint;
		
		length = upperLimit - lowerLimit;
	}
	
	return lowerLimit;
}

// picks a material based on a probabilistic distribution
int pick_mat( uint64_t * seed )
{
	// I have a nice spreadsheet supporting these numbers. They are
	// the fractions (by volume) of material in the core. Not a 
	// *perfect* approximation of where XS lookups are going to occur,
	// but this will do a good job of biasing the system nonetheless.

	// Also could be argued that doing fractions by weight would be 
	// a better approximation, but volume does a good enough job for now.

	double dist[12];
	dist[0]  = 0.140;	// fuel
	dist[1]  = 0.052;	// cladding
	dist[2]  = 0.275;	// cold, borated water
	dist[3]  = 0.134;	// hot, borated water
	dist[4]  = 0.154;	// RPV
	dist[5]  = 0.064;	// Lower, radial reflector
	dist[6]  = 0.066;	// Upper reflector / top plate
	dist[7]  = 0.055;	// bottom plate
	dist[8]  = 0.008;	// bottom nozzle
	dist[9]  = 0.015;	// top nozzle
	dist[10] = 0.025;	// top of fuel assemblies
	dist[11] = 0.013;	// bottom of fuel assemblies
	
	double roll = LCG_random_double(seed);

	// makes a pick based on the distro
	for( int i = 0; i < 12; i++ )
	{
		double running = 0;
		for( int j = i; j > 0; j-- )
			running += dist[j];
		if( roll < running )
			return i;
	}

	return 0;
}

double LCG_random_double(uint64_t * seed)
{
	// LCG parameters
	const uint64_t m = 9223372036854775808ULL; // 2^63
	const uint64_t a = 2806196910506780709ULL;
	const uint64_t c = 1ULL;
	*seed = (a * (*seed) + c) % m;
	return (double) (*seed) / (double) m;
	//return ldexp(*seed, -63);

}	

uint64_t fast_forward_LCG(uint64_t seed, uint64_t n)
{
	// LCG parameters
	const uint64_t m = 9223372036854775808ULL; // 2^63
	uint64_t a = 2806196910506780709ULL;
	uint64_t c = 1ULL;

	n = n % m;

	uint64_t a_new = 1;
	uint64_t c_new = 0;

	while(n > 0) 
	{
		if(n & 1)
		{
			a_new *= a;
			c_new = c_new * a + c;
		}
		c *= (a + 1);
		a *= a;

		n >>= 1;
	}

	return (a_new * seed + c_new) % m;

}

